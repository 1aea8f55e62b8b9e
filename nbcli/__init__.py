"""nbcli: Bayes classifiers (naive Bayes, LDA, QDA) in one log-space core, with a CLI."""

from __future__ import annotations

__all__ = ["__version__"]

# The one place the version is written: pyproject.toml reads it from here
# (`dynamic = ["version"]`). A literal costs nothing to import, where reading
# the installed metadata costs about 10-25 ms of every command's start.
__version__ = "0.1.0"
