"""Outputs that replace their files together (split's train, test and calib parts)."""

from __future__ import annotations

import pytest

from nbcli.io.atomic import atomic_group


def test_files_replace_their_targets_together_or_not_at_all(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("old a")
    b.write_text("old b")
    with pytest.raises(KeyboardInterrupt):
        with atomic_group([a, b]) as (fa, fb):
            fa.write(b"new a")
            fb.write(b"new b")
            raise KeyboardInterrupt  # as Ctrl-C while the last part is written
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]  # no temporaries
    with atomic_group([a, b]) as (fa, fb):
        fa.write(b"new a")
        fb.write(b"new b")
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_a_folder_that_refuses_new_files_is_found_before_any_work(tmp_path, monkeypatch):
    import tempfile

    from nbcli.errors import NbcliError
    from nbcli.io import atomic

    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(NbcliError, match="cannot create a file in folder .*Read-only file system"):
        atomic.check_outputs([("--output", str(tmp_path / "m.npz"))])
