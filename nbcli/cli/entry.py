"""The program's entry point (the ``nbcli`` console script and ``python -m nbcli``).

Its first act is to take SIGINT and SIGTERM in hand (:mod:`nbcli.interrupts`),
before the imports of the command line (Typer, Rich, NumPy: a few hundred
milliseconds), so that a signal during them stops the program with 130 or
143 and one line, never a traceback. Only the interpreter's own start, and
the console script's first import (pip's launcher imports ``re`` before this
module), come before it: so this module imports nothing but ``sys`` before
the handlers are in place.
"""

from __future__ import annotations

import sys


def run() -> None:
    """Run the ``nbcli`` program (:func:`nbcli.cli.app.run`); the process exits with its code."""
    from nbcli import interrupts

    interrupts.install()
    try:
        from nbcli.cli.app import run as run_app

        run_app()
    except interrupts.STOPS as exc:
        # Before the command began (during the imports), or after it ended
        # without writing any file: nothing to finish.
        interrupts.finish()
        try:
            sys.stderr.write(
                "error: terminated\n"
                if isinstance(exc, interrupts.Terminated)
                else "error: interrupted\n"
            )
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        sys.exit(interrupts.exit_code(exc))
