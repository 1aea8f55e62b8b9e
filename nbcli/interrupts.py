"""Ctrl-C (SIGINT) and SIGTERM: a command either finishes or stops cleanly.

The rules (docs/guide/outputs.md, "Exit codes and output streams"):

- A signal the command inherited as ignored stays ignored (the classic
  ``if (signal(SIGINT, SIG_IGN) != SIG_IGN)`` rule of Unix programs). A
  non-interactive shell starts its background jobs (``nbcli fit ... &`` in
  a script) with SIGINT ignored, so that a Ctrl-C meant for the script does
  not reach them; such a command then runs to its end with its complete
  output.
- Otherwise the first signal raises :class:`KeyboardInterrupt` (SIGINT) or
  :class:`Terminated` (SIGTERM) in the main thread. It unwinds every
  ``with`` block, so unfinished temporary files are removed; signals that
  arrive while it unwinds are dropped, so that clean-up is not cut short.
  The command exits with 130 or 143.
- From the moment a command replaces its first output file
  (:func:`finish`), it completes: later signals are dropped and the exit
  code is the command's own, so an interrupted command never leaves a new
  file beside an old one.

polars installs a SIGINT handler of its own when it is imported (a flag its
queries poll, chained to the handler it found). Under an inherited ignore
that handler still ran and the flag ended the batches of a streaming scan
early, as if the file ended there: a model of part of the rows, written
with exit 0. :func:`install` restores the dispositions right after polars
is imported, so no library sees SIGINT.

A signal whose exception is raised inside Python code that a Rust
extension called cannot always unwind: polars' bridge to NumPy looks up
NumPy's C API the first time it converts a frame, runs Python to do so, and
panics (a message and a Rust backtrace on stderr) if that Python raises.
:func:`install`'s import hook makes that first conversion, with signals
held, right after polars is imported. An interruption that a library turns
into an error of its own still ends the command as an interruption
(:func:`raised_signal`).

Worker threads cannot receive the exceptions: after the main thread was
interrupted, :func:`checkpoint` raises :class:`Stopped` in them.
"""

from __future__ import annotations

# Only what the interpreter has loaded already: this module is the
# program's first import, and a signal before its handlers exist is the
# interpreter's to handle.
import contextlib
import signal
import sys

__all__ = [
    "Terminated",
    "Stopped",
    "STOPS",
    "install",
    "restore",
    "reassert",
    "finish",
    "finishing",
    "dropped",
    "stopping",
    "checkpoint",
    "exit_code",
    "raised_signal",
]


class Terminated(BaseException):
    """Raised in the main thread when the process gets SIGTERM.

    Like KeyboardInterrupt it is not an ``Exception``, so it unwinds through
    every ``with`` block (an unfinished output's temporary file is removed)
    and is never mistaken for an error in the data.
    """


class Stopped(BaseException):
    """Raised in a worker thread at a :func:`checkpoint` once the main
    thread was interrupted: its work is no longer wanted."""


#: What stopping early raises in the main thread.
STOPS = (KeyboardInterrupt, Terminated)

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Libraries that take a signal over when imported.
_TAKE_SIGNALS = ("polars",)


class _State:
    def __init__(self):
        self.raised = False
        self.finishing = False
        self.stopping = False
        self.dropped: list[int] = []
        #: An interruption a finalizer swallowed, to raise at a checkpoint.
        self.pending: BaseException | None = None
        #: Inside :func:`held`: the signal that arrived, raised when it ends.
        self.holding = False
        self.held: int | None = None
        #: The signal whose exception was raised in the main thread.
        self.signum: int | None = None


_state = _State()


def _handler(signum, frame):
    if _state.holding and not _state.finishing and not _state.raised:
        _state.held = _state.held or signum
        return
    if _state.finishing or _state.raised:
        _state.dropped.append(signum)
        return
    _state.raised = True
    _state.stopping = True
    _state.signum = signum
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated


def _on_main_thread() -> bool:
    # Imported once the handlers exist (see the imports).
    import threading

    return threading.current_thread() is threading.main_thread()


def install() -> dict[int, object] | None:
    """Handle SIGINT and SIGTERM as the module describes, for one command.

    Signals found ignored are left so. Resets the state of an earlier
    command run in this process. Returns the handlers found (for
    :func:`restore`), or None outside the main thread, where signals cannot
    be handled and nothing is changed.
    """
    global _state
    earlier, _state = _state, _State()
    previous: dict[int, object] = {}
    try:
        for signum in _SIGNALS:
            found = signal.getsignal(signum)
            if found is not signal.SIG_IGN:
                signal.signal(signum, _handler)
            previous[signum] = found
    except ValueError:  # not the main thread (the first call refuses)
        _state = earlier
        return None
    _watch_imports()
    previous[0] = sys.unraisablehook
    _unraisable_interruptions()
    return previous


def restore(previous: dict[int, object] | None) -> None:
    """Put back the handlers :func:`install` found (main thread only)."""
    if previous is None or not _on_main_thread():
        return
    for signum, handler in previous.items():
        if signum == 0:
            sys.unraisablehook = handler  # type: ignore[assignment]
        elif handler is not None:
            signal.signal(signum, handler)  # type: ignore[arg-type]


def before_threads() -> None:
    """Import, on the main thread, the libraries that take signals over when
    imported (:data:`_TAKE_SIGNALS`), so that :func:`reassert` undoes it.

    For a caller about to start a thread that may import one first: the
    handler such a library installs from another thread would stay, and
    polars' ends a streaming scan early on a Ctrl-C that was to be ignored.
    """
    if not _on_main_thread():
        return
    import importlib

    for name in _TAKE_SIGNALS:
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except ImportError:
                continue
            reassert()


def reassert() -> None:
    """Set SIGINT and SIGTERM again to what Python holds for them, undoing a
    handler a library installed below Python (polars'). Main thread only."""
    if not _on_main_thread():
        return
    for signum in _SIGNALS:
        handler = signal.getsignal(signum)
        if handler is not None:
            signal.signal(signum, handler)


@contextlib.contextmanager
def held():
    """Delay Ctrl-C and SIGTERM to the end of the block, where the first one
    that arrived is raised as usual.

    For steps that must not be cut in two: creating a temporary file and
    learning its name, so that whoever removes it on the way out knows it.
    """
    if _state.holding or not _on_main_thread():
        # Signals reach the main thread only; another thread has nothing to hold.
        yield
        return
    _state.holding = True
    try:
        yield
    finally:
        _state.holding = False
        signum, _state.held = _state.held, None
        if signum is not None:
            _handler(signum, None)


def finish() -> None:
    """From now on the command completes: signals are dropped (see the module)."""
    _state.finishing = True


def dropped() -> list[int]:
    """The signals dropped so far in this command (while finishing or unwinding)."""
    return _state.dropped


def finishing() -> bool:
    """Whether :func:`finish` was called for this command."""
    return _state.finishing


def stopping() -> bool:
    """Whether the main thread was interrupted (and the command is not finishing)."""
    return _state.stopping and not _state.finishing


def checkpoint() -> None:
    """In a worker thread, raise :class:`Stopped` once the main thread was
    interrupted. In the main thread, which gets the interruption itself,
    raise one that a finalizer swallowed (see :func:`_unraisable_interruptions`)."""
    if _on_main_thread():
        pending = _state.pending
        if pending is not None and not _state.finishing:
            _state.pending = None
            _state.raised = True
            raise pending
    elif stopping():
        raise Stopped


def exit_code(exc: BaseException) -> int:
    """130 for an interruption by SIGINT, 143 for SIGTERM."""
    return 143 if isinstance(exc, Terminated) else 130


def raised_signal() -> int | None:
    """The signal (SIGINT or SIGTERM) whose exception this command raised in
    the main thread, or None.

    A command that fails after one failed because of it, whatever a library
    made of the exception on the way (polars wraps an exception raised in a
    callback in an error of its own): it exits as interrupted.
    """
    return _state.signum


class _AfterImport:
    """Runs :func:`reassert` right after a module of :data:`_TAKE_SIGNALS` is
    first imported (in the main thread; a caller that starts threads which
    might import one first imports it itself beforehand)."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _TAKE_SIGNALS:
            return None
        import importlib.util

        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            reassert()
            _warm(fullname, module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _warm(name: str, module) -> None:
    """Make polars' first conversion to NumPy, with signals held (see the module)."""
    if name != "polars":
        return
    with held():
        try:
            module.Series([0.0]).to_numpy()
        except Exception:  # pragma: no cover - a polars without the bridge
            pass


def _watch_imports() -> None:
    if any(isinstance(f, _AfterImport) for f in sys.meta_path):
        return
    if any(name in sys.modules for name in _TAKE_SIGNALS):
        reassert()
    sys.meta_path.insert(0, _AfterImport())


def _unraisable_interruptions() -> None:
    """An interruption raised inside a finalizer (a generator closed by the
    garbage collector, a ``__del__``) cannot propagate: Python would print
    "Exception ignored in ..." with a traceback and go on. Such an
    interruption is kept instead and raised at the main thread's next
    :func:`checkpoint` (the next chunk read, or before an output replaces
    its file); a command that reaches none completes."""
    previous = sys.unraisablehook
    if getattr(previous, "_nbcli", False):
        return

    def hook(unraisable):
        exc = unraisable.exc_value
        if isinstance(exc, STOPS + (Stopped,)):
            if isinstance(exc, STOPS) and _state.raised and not _state.finishing:
                # Worker threads go on stopping (``stopping`` stays set).
                _state.pending = exc.with_traceback(None)
                _state.raised = False
            return
        previous(unraisable)

    hook._nbcli = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook
