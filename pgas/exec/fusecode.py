"""The source text of fused kernels (:mod:`pgas.exec.fuse`): which dtypes a kernel takes,
each compiled operation's expression per dtype kind, and the helper functions whose
integer and float semantics match NumPy's loops bit for bit."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

import numpy as np

from .. import numbacache

#: The dtypes a kernel computes in (bool, integers, float32, float64).
DTYPES = {np.dtype(c) for c in "?bBhHiIlLqQfd"}
BIN = {"add": {"iuf": "({0} + {1})", "b": "({0} | {1})"},
        "subtract": {"iuf": "({0} - {1})"},
        "multiply": {"iuf": "({0} * {1})", "b": "({0} & {1})"},
        "divide": {"f": "({0} / {1})"}, "true_divide": {"f": "({0} / {1})"},
        "floor_divide": {"i": "_fdiv_s({0}, {1})", "u": "_fdiv_u({0}, {1})"},
        "remainder": {"i": "_mod_s({0}, {1})", "u": "_mod_u({0}, {1})"},
        "equal": {"iufb": "({0} == {1})"}, "not_equal": {"iufb": "({0} != {1})"},
        "less": {"iub": "({0} < {1})", "f": "_lt({0}, {1}, {t}(0))"},
        "less_equal": {"iub": "({0} <= {1})", "f": "_lt_eq({0}, {1}, {t}(0))"},
        "greater": {"iub": "({0} > {1})", "f": "_lt({1}, {0}, {t}(0))"},
        "greater_equal": {"iub": "({0} >= {1})", "f": "_lt_eq({1}, {0}, {t}(0))"},
        "logical_and": {"iufb": "(({0} != 0) & ({1} != 0))"},
        "logical_or": {"iufb": "(({0} != 0) | ({1} != 0))"},
        "logical_xor": {"iufb": "(({0} != 0) != ({1} != 0))"},
        "bitwise_and": {"iub": "({0} & {1})"}, "bitwise_or": {"iub": "({0} | {1})"},
        "bitwise_xor": {"iub": "({0} ^ {1})"},
        "minimum": {"iub": "_min({0}, {1})"}, "maximum": {"iub": "_max({0}, {1})"}}
UN = {"negative": {"iuf": "(-{0})"}, "positive": {"iuf": "(+{0})"},
       "absolute": {"iuf": "abs({0})", "b": "{0}"}, "square": {"iuf": "_sq({0})", "b": "{0}"},
       "sqrt": {"f": "_sqrt({0})"}, "logical_not": {"iufb": "({0} == 0)"},
       "invert": {"iu": "(~{0})", "b": "({0} == 0)"}}

HELPERS = '''
import numpy as np
from numba import njit
from numpy import bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64

_jit = njit(inline="always", error_model="numpy")
@_jit
def _fdiv_s(a, b):
    z = a ^ a
    if b == z:
        return z
    if b == -1:
        return -a
    return a // b
@_jit
def _fdiv_u(a, b):
    z = a ^ a
    if b == z:
        return z
    return a // b
@_jit
def _mod_s(a, b):
    z = a ^ a
    if b == z or b == -1:
        return z
    return a % b
@_jit
def _mod_u(a, b):
    z = a ^ a
    if b == z:
        return z
    return a % b
@_jit
def _min(a, b):
    return a if a <= b else b
@_jit
def _max(a, b):
    return a if a >= b else b
@_jit
def _lt(a, b, z):
    # an ordered comparison vectorised raises "invalid" on NaN (x86 CMPLTPD), NumPy's is quiet:
    # NaNs are replaced by z, a zero of their dtype (by == and a select, both quiet), before it
    return (a == a) & (b == b) & ((a if a == a else z) < (b if b == b else z))
@_jit
def _lt_eq(a, b, z):
    return (a == a) & (b == b) & ((a if a == a else z) <= (b if b == b else z))
@_jit
def _sq(a):
    return a * a
@_jit
def _sqrt(a):
    return np.sqrt(a)
'''


def source(code: str, nparams: int, ndim: int) -> str:
    idx = ", ".join(f"i{d}" for d in range(ndim))
    lines = [HELPERS, "", "@njit(cache=True, error_model='numpy', nogil=True)",
             f"def kernel(out, {', '.join(f'c{k}' for k in range(nparams))}):"]
    for d in range(ndim):
        lines.append("    " * (d + 1) + f"for i{d} in range(out.shape[{d}]):")
    lines.append("    " * (ndim + 1) + f"out[{idx}] = {code.replace('IDX', idx)}")
    return "\n".join(lines) + "\n"


def cache_dir() -> str:
    """Where generated kernel modules (and numba's compiled code beside them) are kept:
    ``$PGAS_CACHE_DIR/fuse-v2`` or ``~/.cache/pgas/fuse-v2`` (the version of
    :mod:`pgas.numbacache`: caches saved without its lock are not read)."""
    root = os.environ.get("PGAS_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "pgas")
    return os.path.join(root, f"fuse-v{numbacache.VERSION}")


def load_module(source: str, tag: str):
    """The module of ``source``, from a file in :func:`cache_dir` named by its hash (so
    numba's ``cache=True`` keeps its machine code beside it)."""
    name = f"pgas_{tag}_" + hashlib.sha1(source.encode()).hexdigest()[:20]
    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        folder = os.path.join(tempfile.gettempdir(), f"pgas-fuse-{os.getuid()}")
        os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        try:
            os.link(tmp, path)             # create-if-absent: a file never changes once written
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    numbacache.install()                   # several locales compile into this folder at once
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
