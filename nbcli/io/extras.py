"""Optional packages: import one, or a one-line error naming the extra that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from nbcli.errors import NbcliError

__all__ = ["require"]


def require(module: str, extra: str, what: str, package: str | None = None) -> ModuleType:
    """``import module``, or an :class:`NbcliError` saying what to install.

    Parameters
    ----------
    module : str
        The module to import (``"arff"``, ``"s3fs"``).
    extra : str
        The nbcli extra that installs it (``pip install 'nbcli[extra]'``).
    what : str
        What needs it, for the message ("reading ARFF files").
    package : str, optional
        The PyPI name, where it differs from the module's.

    Raises
    ------
    NbcliError
        When the module is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        name = package or module
        raise NbcliError(
            f"{what} needs the Python package {name}, which is not installed; "
            f"install it with: pip install 'nbcli[{extra}]'"
        ) from None
