"""The source text of fused kernels (:mod:`pgas.exec.fuse`): which dtypes a kernel takes,
each compiled operation's expression per dtype kind, and the helper functions whose
integer and float semantics match NumPy's loops bit for bit."""

from __future__ import annotations

import numpy as np

#: The dtypes a kernel computes in (bool, integers, float32, float64).
DTYPES = {np.dtype(c) for c in "?bBhHiIlLqQfd"}
BIN = {"add": {"iuf": "({0} + {1})", "b": "({0} | {1})"},
        "subtract": {"iuf": "({0} - {1})"},
        "multiply": {"iuf": "({0} * {1})", "b": "({0} & {1})"},
        "divide": {"f": "({0} / {1})"}, "true_divide": {"f": "({0} / {1})"},
        "floor_divide": {"i": "_fdiv_s({0}, {1})", "u": "_fdiv_u({0}, {1})"},
        "remainder": {"i": "_mod_s({0}, {1})", "u": "_mod_u({0}, {1})"},
        "equal": {"iufb": "({0} == {1})"}, "not_equal": {"iufb": "({0} != {1})"},
        "less": {"iufb": "({0} < {1})"}, "less_equal": {"iufb": "({0} <= {1})"},
        "greater": {"iufb": "({0} > {1})"}, "greater_equal": {"iufb": "({0} >= {1})"},
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
def _sq(a):
    return a * a
@_jit
def _sqrt(a):
    return np.sqrt(a)
'''
