"""Memory follows the size of the data, never its longest string, and every
other input has a stated limit, refused in one line before the memory or
time it guards is taken."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import json

import pytest

from tests.conftest import assert_one_error_line, nbcli_in_process

#: The bound of the issue: no run of a 2 MB input takes more than 1 GB.
PEAK_LIMIT_BYTES = 1 << 30

_MEASURE = """
import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "nbcli", *sys.argv[1:]], capture_output=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stdout.write(f"{done.returncode} {peak}\\n")
sys.stderr.write(done.stderr.decode("utf-8", "replace"))
"""


def peak_of(*args, cwd) -> tuple[int, int, str]:
    """Exit code, peak resident bytes and stderr of one ``nbcli`` process
    (``ru_maxrss`` of the only child of a fresh interpreter, in KiB on Linux)."""
    env = dict(os.environ, NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *map(str, args)],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )
    code, peak = done.stdout.split()
    return int(code), int(peak) * 1024, done.stderr.decode("utf-8", "replace")


def _long_label_csv(path, n=100_000, width=5_000):
    """About 2 MB: two short classes and a third spelled with ``width``
    characters, 34 rows of it (a '<U5000' array of the rows would be 2 GB)."""
    rng = np.random.default_rng(0)
    a, b = rng.random(n), rng.random(n)
    labels = np.where(rng.random(n) < 0.5, "cat", "dog").astype(object)
    labels[::3000] = "x" * width
    lines = ["a,b,label"] + [f"{x:.4f},{y:.4f},{c}" for x, y, c in zip(a, b, labels)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert 1.5e6 < path.stat().st_size < 2.5e6
    return path


@pytest.fixture(scope="module")
def long_labels(tmp_path_factory):
    d = tmp_path_factory.mktemp("long")
    _long_label_csv(d / "long.csv")
    return d


@pytest.mark.parametrize(
    "args",
    [
        ("fit", "-m", "gaussian", "-d", "long.csv", "-o", "m.npz"),
        ("cv", "-m", "gaussian", "-d", "long.csv", "-k", "3"),
        ("split", "-d", "long.csv", "--test", "0.2", "--output-dir", "parts"),
    ],
    ids=["fit", "cv", "split"],
)
def test_a_long_label_costs_its_length_once_not_per_row(long_labels, args):
    code, peak, err = peak_of(*args, "--quiet", cwd=long_labels)
    assert code == 0, err
    assert peak < PEAK_LIMIT_BYTES, f"{args[0]}: {peak / 2**20:.0f} MiB"


def test_predictions_of_long_classes_are_not_fixed_width(long_labels):
    code, _, err = peak_of(
        "fit", "-m", "gaussian", "-d", "long.csv", "-o", "p.npz", "--quiet", cwd=long_labels
    )
    assert code == 0, err
    code, peak, err = peak_of(
        "predict", "-m", "p.npz", "-d", "long.csv", "-o", "p.csv", "--quiet", cwd=long_labels
    )
    assert code == 0, err
    assert peak < PEAK_LIMIT_BYTES, f"{peak / 2**20:.0f} MiB"
    predicted = (long_labels / "p.csv").read_text(encoding="utf-8").splitlines()
    assert len(predicted) == 100_001


def test_label_codes_share_one_string_per_distinct_label():
    from nbcli.io.cells import label_codes, resolve_labels

    long = "é" * 5_000
    values = np.empty(10_000, dtype=object)
    values[:] = ["b", long] * 5_000
    typed = resolve_labels(values)
    assert typed.dtype == object and typed.nbytes == 8 * values.size
    assert typed[1] is typed[3]  # one string, referenced from every row
    uniques, codes = label_codes(typed)
    assert uniques.tolist() == ["b", long] and codes[:4].tolist() == [0, 1, 0, 1]
    assert resolve_labels(np.array(["3", "10"], dtype=object)).tolist() == [3, 10]


def test_a_long_header_field_is_refused_in_one_line_by_every_command(tmp_path):
    from nbcli.io.limits import MAX_NAME_CHARS

    (tmp_path / "h.csv").write_text(
        "a," + "h" * 5_000_000 + ",label\n1,2,x\n2,3,y\n", encoding="utf-8"
    )
    (tmp_path / "n.csv").write_text(
        "a," + "n" * (MAX_NAME_CHARS + 1) + ",label\n1,2,x\n2,3,y\n", encoding="utf-8"
    )
    from tests.conftest import fitted_model_file

    fitted_model_file(tmp_path / "m.npz")
    h = tmp_path / "h.csv"
    for args in (
        ("fit", "-m", "gaussian", "-d", h, "-o", tmp_path / "o.npz"),
        ("predict", "-m", tmp_path / "m.npz", "-d", h),
        ("evaluate", "-m", tmp_path / "m.npz", "-d", h),
        ("cv", "-m", "gaussian", "-d", h),
        ("split", "-d", h, "--test", "0.5", "--output-dir", tmp_path / "parts"),
    ):
        assert_one_error_line(nbcli_in_process(*args), "h.csv", f"{MAX_NAME_CHARS:,} characters")
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", tmp_path / "n.csv", "-o", "o.npz")
    assert_one_error_line(run, "column 2 of the header", f"{MAX_NAME_CHARS + 1:,} characters")


def test_qda_over_a_wide_header_is_refused_before_its_statistics(tmp_path):
    d = 20_000
    header = ",".join(f"c{i}" for i in range(d)) + ",label\n"
    rows = "".join(",".join([str(r)] * d) + f",{'xy'[r % 2]}\n" for r in range(4))
    (tmp_path / "wide.csv").write_text(header + rows, encoding="utf-8")
    # 2 classes x 20,000^2 x 3 arrays of float64: 17.9 GiB.
    code, peak, err = peak_of(
        "fit", "-m", "qda", "-d", "wide.csv", "-o", "q.npz", "--quiet", cwd=tmp_path
    )
    assert code == 2 and err.count("error:") == 1, err
    assert "qda" in err and "20,000 features" in err and "17.9 GiB" in err, err
    assert peak < PEAK_LIMIT_BYTES


@pytest.fixture
def small(tmp_path):
    rng = np.random.default_rng(1)
    rows = "".join(
        f"{a:.6f},{b:.6f},{'xy'[i % 2]}\n" for i, (a, b) in enumerate(rng.random((60, 2)))
    )
    (tmp_path / "d.csv").write_text("a,b,label\n" + rows, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "args, fragments",
    [
        (
            ("fit", "-m", "gaussian", "--chunk-size", "99999999999999999999"),
            ["--chunk-size", "10000000"],
        ),
        (("cv", "-m", "gaussian", "--repeats", "1000000"), ["--repeats", "1<=x<=100"]),
        (
            ("tune", "-m", "gaussian", "--var-smoothing", "log:1e-9..1:1000000"),
            ["1,000,000 values", "10,000"],
        ),
        (
            (
                "tune",
                "-m",
                "mixed",
                "--var-smoothing",
                "log:1e-9..1:1000",
                "--alpha",
                "lin:0.1..1:100",
            ),
            ["100,000 settings", "1,000 var_smoothing x 100 alpha"],
        ),
    ],
    ids=["chunk-size", "repeats", "grid-values", "grid-product"],
)
def test_counts_beyond_their_limit_are_refused_before_the_data_is_read(small, args, fragments):
    # A data file that does not exist: the refusal comes first.
    output = ("-o", small / "m.npz") if args[0] == "fit" else ()
    run = nbcli_in_process(*args, "-d", small / "absent.csv", *output)
    assert_one_error_line(run, *fragments)


def test_stop_word_files_are_bounded_in_bytes_and_lines(small):
    from nbcli.io.limits import MAX_STOP_WORDS

    (small / "t.csv").write_text("w,label\nhello world,x\nbye world,y\nhi,x\nbye,y\n")
    (small / "many.txt").write_text("a\n" * (MAX_STOP_WORDS + 1))
    base = ("fit", "-m", "multinomial", "-d", small / "t.csv", "--text", "w", "-o", small / "t.npz")
    assert_one_error_line(
        nbcli_in_process(*base, "--stop-words", "/dev/zero"), "/dev/zero", "10 MB"
    )
    run = nbcli_in_process(*base, "--stop-words", small / "many.txt")
    assert_one_error_line(run, "1,000,001 lines", "1,000,000")
    (small / "few.txt").write_text("world\n")
    assert nbcli_in_process(*base, "--stop-words", small / "few.txt", "-q").returncode == 0


def test_split_refuses_several_data_files_rather_than_ignoring_all_but_the_last(small):
    (small / "e.csv").write_text((small / "d.csv").read_text())
    run = nbcli_in_process(
        "split",
        *("-d", small / "d.csv", "-d", small / "e.csv", "--test", "0.5"),
        *("--output-dir", small / "parts"),
    )
    assert_one_error_line(run, "--data: 2 files given", "reads one data file")
    assert not (small / "parts").exists()


@pytest.mark.parametrize("command", ["cv", "tune"])
def test_cv_and_tune_read_every_data_file_never_only_the_last(small, command):
    # d.csv twice is every row twice: the fold sizes show whether both were read.
    (small / "e.csv").write_text((small / "d.csv").read_text())
    n_rows = len((small / "d.csv").read_text().splitlines()) - 1
    extra = {"cv": (), "tune": ("--var-smoothing", "1e-9,1e-8")}[command]
    runs = [
        nbcli_in_process(
            command, "-m", "gaussian", *data, *extra, "--bootstrap", "0", "--json", "-"
        )
        for data in (["-d", small / "d.csv", "-d", small / "e.csv"], ["-d", small / "d.csv"])
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    two, one = (json.loads(r.stdout) for r in runs)
    assert two["n_samples"] == 2 * one["n_samples"] == 2 * n_rows


@pytest.mark.parametrize("command", ["cv", "tune"])
def test_a_cell_whose_square_overflows_is_refused_by_cv_as_by_fit(small, command):
    lines = (small / "d.csv").read_text().splitlines()
    lines[6] = "1e308,0.5,x"
    (small / "big.csv").write_text("\n".join(lines) + "\n")
    extra = ("--var-smoothing", "1e-9,1e-3") if command == "tune" else ()
    fit = nbcli_in_process("fit", "-m", "gaussian", "-d", small / "big.csv", "-o", small / "m.npz")
    message = assert_one_error_line(fit, "column 'a'", "too large")
    run = nbcli_in_process(command, "-m", "gaussian", "-d", small / "big.csv", *extra)
    assert assert_one_error_line(run) == message


@pytest.mark.parametrize("field", ["training.data", "target"])
def test_model_metadata_texts_are_bounded_and_inspect_is_quick(tmp_path, field):
    from nbcli.io.modelfile import load_model, save_model
    from tests.conftest import fitted_model_file

    fitted_model_file(tmp_path / "m.npz")
    mf = load_model(tmp_path / "m.npz")
    if field == "target":
        mf.target = "t" * 50_000_000
    else:
        mf.training["data"] = "x" * 50_000_000
    save_model(mf, tmp_path / "huge.npz")
    run = nbcli_in_process("inspect", tmp_path / "huge.npz")
    assert_one_error_line(run, "50,000,000 characters", repr(field), "corrupt")


def test_inspect_shows_long_texts_cut_with_their_length(tmp_path):
    from nbcli.io.limits import MAX_METADATA_TEXT
    from nbcli.io.modelfile import load_model, save_model
    from tests.conftest import fitted_model_file

    fitted_model_file(tmp_path / "m.npz")
    mf = load_model(tmp_path / "m.npz")
    mf.training["data"] = "d" * 200_000
    save_model(mf, tmp_path / "long.npz")
    run = nbcli_in_process("inspect", tmp_path / "long.npz")
    assert run.returncode == 0, run.stderr
    assert "(200,000 characters)" in run.stdout
    assert "d" * (MAX_METADATA_TEXT + 1) not in run.stdout.replace("\n", "").replace(" ", "")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["fit", "tune"])
def test_a_report_that_cannot_be_written_leaves_the_model_file_as_it_was(small, command):
    old = b"an earlier model file"
    (small / "m.npz").write_bytes(old)
    grid = ("--var-smoothing", "1e-9,1e-8") if command == "tune" else ()
    args = (command, "-m", "gaussian", "-d", small / "d.csv", *grid, "-o", small / "m.npz")
    run = nbcli_in_process(*args, "--json", "/dev/full", "--force", "-q")
    assert_one_error_line(run, "/dev/full", "No space left")
    assert (small / "m.npz").read_bytes() == old
    assert sorted(p.name for p in small.iterdir()) == ["d.csv", "m.npz"]  # no temporary file
    ok = nbcli_in_process(*args, "--json", small / "r.json", "--force", "-q")
    assert ok.returncode == 0, ok.stderr
    assert (small / "m.npz").read_bytes() != old and (small / "r.json").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_calibration_report_that_cannot_be_written_leaves_the_model_file_as_it_was(small):
    # Five copies of one noisy feature: naive Bayes counts its evidence five
    # times, so temperature scaling improves it and the model file is written.
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 200)
    x = y + rng.normal(0, 0.8, 200)
    rows = "".join(f"{v:.6f},{v:.6f},{v:.6f},{v:.6f},{v:.6f},{'xy'[c]}\n" for v, c in zip(x, y))
    (small / "d.csv").write_text("a,b,c,d,e,label\n" + rows, encoding="utf-8")
    fitted = nbcli_in_process("fit", "-m", "gaussian", "-d", small / "d.csv", "-o", small / "g.npz")
    assert fitted.returncode == 0, fitted.stderr
    old = b"an earlier model file"
    (small / "m.npz").write_bytes(old)
    args = ("calibrate", "-m", small / "g.npz", "-d", small / "d.csv", "--allow-training-data")
    args += ("--method", "temperature", "-o", small / "m.npz")
    run = nbcli_in_process(*args, "--json", "/dev/full", "--force", "-q")
    assert_one_error_line(run, "/dev/full", "No space left")
    assert (small / "m.npz").read_bytes() == old
    assert sorted(p.name for p in small.iterdir()) == ["d.csv", "g.npz", "m.npz"]
    ok = nbcli_in_process(*args, "--json", small / "r.json", "--force", "-q")
    assert ok.returncode == 0, ok.stderr
    assert (small / "m.npz").read_bytes() != old and (small / "r.json").exists()


def test_the_guide_states_every_limit():
    from pathlib import Path

    from nbcli.io import limits
    from nbcli.io.csv_format import LINE_LIMIT
    from nbcli.io.model_validation import MAX_METADATA_CHARS

    guide = Path(__file__).resolve().parents[1] / "docs" / "guide" / "outputs.md"
    section = guide.read_text(encoding="utf-8").split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = {line.split(" | ")[0].strip("| "): line for line in section.splitlines() if "|" in line}

    def row(name):
        return next(line for key, line in rows.items() if name in key)

    assert f"{LINE_LIMIT >> 20} MB" in row("a data line")
    assert f"{limits.MAX_NAME_CHARS:,} characters" in row("a column name")
    assert f"{limits.STATISTICS_BYTES >> 30} GiB" in row("statistics")
    assert f"{limits.MAX_STOP_WORD_BYTES >> 20} MB and {limits.MAX_STOP_WORDS:,} lines" in row(
        "--stop-words"
    )
    assert f"1 to {limits.MAX_CHUNK_ROWS:,} rows" in row("--chunk-size")
    assert f"1 to {limits.MAX_REPEATS}" in row("--repeats")
    assert f"{limits.MAX_GRID:,} settings" in row("grid")
    meta = row("metadata")
    assert f"{MAX_METADATA_CHARS:,}" in meta and f"{limits.MAX_METADATA_TEXT:,} characters" in meta


@pytest.mark.parametrize("command", ["fit", "cv"])
def test_many_classes_times_many_categories_are_refused_before_their_counts(tmp_path, command):
    # About 15,000 classes x 15,000 categories: 1.7 GiB of counts for one model.
    rng = np.random.default_rng(3)
    n = 60_000
    cells, labels = rng.integers(0, 15_000, n), rng.integers(0, 15_000, n)
    rows = "".join(f"v{c},k{y}\n" for c, y in zip(cells, labels))
    (tmp_path / "many.csv").write_text("c,label\n" + rows, encoding="utf-8")
    args = ["-m", "categorical", "-d", "many.csv", "--column", "c=categorical", "--target", "label"]
    args += ["-o", "m.npz"] if command == "fit" else ["-k", "3"]
    code, peak, err = peak_of(command, *args, "--quiet", cwd=tmp_path)
    assert code == 2 and err.count("error:") == 1, err
    assert "categories" in err and "GiB, over the limit of 1 GiB" in err, err
    assert peak < PEAK_LIMIT_BYTES


def test_npz_text_wider_than_its_limit_is_refused_before_it_is_decompressed(tmp_path):
    from nbcli.io.limits import MAX_NPZ_TEXT_BYTES

    n = 20_000
    y = np.array(["a", "b"] * (n // 2), dtype="<U5000")  # 400 MB decompressed
    y[::1000] = "x" * 5000
    assert y.nbytes > MAX_NPZ_TEXT_BYTES
    np.savez_compressed(tmp_path / "wide.npz", X=np.zeros((n, 2)), y=y)
    assert (tmp_path / "wide.npz").stat().st_size < 2e6
    code, peak, err = peak_of(
        "fit", "-m", "gaussian", "-d", "wide.npz", "-o", "m.npz", "--quiet", cwd=tmp_path
    )
    assert code == 2 and err.count("error:") == 1, err
    assert "array 'y'" in err and "20,000 bytes an entry" in err and "256 MB" in err, err
    assert peak < y.nbytes
