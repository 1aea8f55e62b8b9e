"""nbcli: Bayes classifiers (naive Bayes, LDA, QDA) in one log-space core, with a CLI."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # The version is written once, in pyproject.toml, and read from the
    # installed metadata on first use: importlib.metadata costs about 25 ms,
    # which `nbcli --help` would otherwise pay for nothing.
    if name != "__version__":
        raise AttributeError(f"module 'nbcli' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("nbcli")
    except PackageNotFoundError:  # a source tree that was never installed
        value = "0+unknown"
    globals()["__version__"] = value
    return value
