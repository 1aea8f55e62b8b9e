"""Exit non-zero unless every OpenBLAS loaded runs the kernel named in OPENBLAS_CORETYPE.

A DYNAMIC_ARCH build of OpenBLAS falls back to the kernel it detects,
silently, when OPENBLAS_CORETYPE names a kernel it was not built with (or
none at all): a run "under Prescott" would then test the default kernel
again. threadpoolctl reports the kernel each loaded library chose.

Usage: OPENBLAS_CORETYPE=Sandybridge python .ci/blas_core.py
"""

import os
import sys

import numpy  # noqa: F401  (loads NumPy's OpenBLAS)
import scipy.linalg  # noqa: F401  (loads SciPy's, which may be another copy)
from threadpoolctl import threadpool_info

#: Kernels OpenBLAS reports under another name. In the x86-64 builds of the
#: NumPy and SciPy wheels, Katmai is an alias of the Prescott kernel table,
#: and the name lookup returns the first alias (driver/others/dynamic.c).
ALIASES = {"prescott": {"prescott", "katmai"}}

wanted = os.environ.get("OPENBLAS_CORETYPE", "")
if not wanted:
    sys.exit("blas_core: OPENBLAS_CORETYPE is not set")
accepted = ALIASES.get(wanted.lower(), {wanted.lower()})
libraries = [info for info in threadpool_info() if info.get("internal_api") == "openblas"]
if not libraries:
    sys.exit("blas_core: no OpenBLAS loaded (NumPy and SciPy use another BLAS)")
for info in libraries:
    loaded = str(info.get("architecture"))
    print(f"blas_core: {info['filepath']}: {loaded}")
    if loaded.lower() not in accepted:
        sys.exit(f"blas_core: OPENBLAS_CORETYPE={wanted} asked for, {loaded} loaded")
