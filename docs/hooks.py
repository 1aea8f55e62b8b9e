"""MkDocs hooks: the reference pages (``docs/reference_pages.py``) as the code gives them.

The pages are committed under ``docs/reference/``; the site takes them from
the code at build time all the same, in place of the committed copies.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.structure.files import File


def _reference_pages():
    path = Path(__file__).with_name("reference_pages.py")
    spec = importlib.util.spec_from_file_location("nbcli_reference_pages", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def on_files(files, config):
    for src_uri, text in _reference_pages().pages().items():
        committed = files.get_file_from_path(src_uri)
        if committed is not None:
            files.remove(committed)
        files.append(File.generated(config, src_uri, content=text))
    return files
