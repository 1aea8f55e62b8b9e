"""Errors the user can act on.

Anything raised as :class:`NbcliError` is printed by the CLI as one line,
``error: <message>``, and ends the command with ``exit_code``.
"""

from __future__ import annotations

USAGE_OR_INPUT = 2
THRESHOLD_MISSED = 3
PARTIAL_FAILURE = 4

#: What a path that does not exist is told, on every engine.
NO_SUCH_FILE = "no such file; check the path"


class NbcliError(Exception):
    """A usage or input problem: bad option, unreadable or invalid data or model file.

    The message names the file and, where it applies, the column and the
    first offending row, and says what to do about it.
    """

    exit_code = USAGE_OR_INPUT
    #: The data row the message names (from 1), where it names one.
    row: int | None = None

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
