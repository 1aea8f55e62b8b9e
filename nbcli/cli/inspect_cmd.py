"""``nbcli inspect``: what a model file holds."""

from __future__ import annotations


def inspect():
    """Placeholder."""
