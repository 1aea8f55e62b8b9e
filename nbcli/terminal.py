"""Whether a stream is a terminal: the one test behind colour, width and progress bars."""

from __future__ import annotations


def is_terminal(stream) -> bool:
    """True when ``stream`` is an open terminal; False for files, pipes, closed or odd streams."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
