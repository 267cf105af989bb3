"""``np.einsum`` on distributed arrays, mapped onto pgas operations by the pattern's shape.

The subscripts are read as NumPy reads them, with any letters and with an
implicit output (``'ij,jk'`` is ``'ij,jk->ik'``); NumPy itself checks them
first on size-1 stand-ins of the operands, so a bad string, operand count or
dimension count raises NumPy's own ValueError, and the result dtype is
NumPy's.  Then, with letters renamed in order of first appearance:

- one operand, distinct letters: a sum over the letters left out of the output
  (``'ij->'``, ``'ij->i'``), then a transpose (``'ij->ji'``), or a copy
  (``'ij->ij'``); ``'ii->i'`` is the diagonal and ``'ii->'`` the trace;
- two operands: first each operand is summed over the letters only it has and
  the output lacks (``'ij,k->i'``); then
  - no letter contracted: the broadcast product in the output's order
    (``'ij,ij->ij'``, ``'i,j->ij'``, ``'ij,j->ij'``, ``'ij,ji->ij'``);
  - one letter contracted, each operand at most 2-D, no other letter shared:
    :func:`pgas.array.linalg.matmul` on the operands transposed as needed
    (``'ij,jk->ik'``, ``'ik,kj->ij'``, ``'ij,j->i'``, ``'i,ij->j'``, ``'i,i->'``,
    ``'ij,kj->ik'``, and the output transposed for ``'ij,jk->ki'``);
  - one operand's letters contain the other's: the element-wise product, then
    the one-operand case (``'ij,ij->'``, ``'ij,ij->i'``, ``'ijk,jk->i'``).

Anything else (three or more operands, ``...``, a repeated letter in an
operand of two, a batched product such as ``'bij,bjk->bik'``) raises
NotImplementedError naming the pattern.
"""

from __future__ import annotations

import numpy as np

from .npapi import _dist, reject_keywords, unsupported

CASES = ("pgas maps einsum onto its operations: one operand (sums over letters, transposes, 'ii->i', 'ii->'), "
         "two operands whose contraction is a matrix product (one summed letter, operands up to 2-D: "
         "'ij,jk->ik', 'ij,j->i', 'i,i->'), an element-wise or broadcast product ('ij,ij->ij', 'i,j->ij') "
         "and sums of an element-wise product ('ij,ij->', 'ij,ij->i')")


def _parse(spec: str) -> tuple[list[str], str]:
    """The inputs' letters and the output's (NumPy's implicit output: the letters that
    appear once, in alphabetical order)."""
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    if not arrow:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return ins, out


def _check_sizes(ins, operands) -> dict:
    """Each letter's extent; NumPy's ValueError where two terms disagree (an extent 1, which
    NumPy broadcasts, is NotImplementedError: pgas needs equal extents)."""
    size: dict = {}
    for k, (letters, x) in enumerate(zip(ins, operands)):
        for c, n in zip(letters, np.shape(x)):
            if size.setdefault(c, n) != n:
                if 1 in (n, size[c]):
                    raise NotImplementedError(f"einsum: label '{c}' has extent {size[c]} and {n}: pgas does not "
                                              "broadcast an extent 1 against a larger one; pass equal extents")
                raise ValueError(f"einstein sum subscripts string: size of label '{c}' for operand {k} ({n}) does "
                                 f"not match previous terms ({size[c]})")
    return size


def _canonical(spec_ins, out) -> str:
    """The pattern with letters renamed a, b, c, ... by first appearance (how errors name it)."""
    names: dict = {}
    for c in "".join(spec_ins) + out:
        names.setdefault(c, "abcdefghijklmnopqrstuvwxyz"[len(names) % 26])
    return ",".join("".join(names[c] for c in s) for s in spec_ins) + "->" + "".join(names[c] for c in out)


def einsum(subscripts, *operands, **kwargs):
    """Collective: ``np.einsum`` for the patterns that map onto pgas operations (see
    :mod:`pgas.array.einsum`); a DistArray, or a scalar on every locale for a full
    contraction."""
    reject_keywords({k: v for k, v in kwargs.items() if k != "optimize"}, "einsum")
    if not isinstance(subscripts, str):
        raise unsupported("einsum", "pgas takes the subscripts as a string ('ij,jk->ik'), not the sublist form")
    spec = subscripts.replace(" ", "")
    stand_ins = [np.ones((1,) * np.ndim(x), np.result_type(x)) for x in operands]
    rdt = np.asarray(np.einsum(spec, *stand_ins)).dtype          # NumPy's checks and its result dtype
    if "." in spec:
        raise NotImplementedError(f"einsum {subscripts!r}: ellipsis ('...') subscripts are not supported; "
                                  "write one letter per dimension")
    ins, out = _parse(spec)
    _check_sizes(ins, operands)
    pattern = _canonical(ins, out)
    ops = [_dist(x) for x in operands]
    if len(ops) == 1:
        res = _one(ins[0], out, ops[0], rdt, pattern)
    elif len(ops) == 2:
        res = _two(ins, out, ops, rdt, pattern)
    else:
        res = None
    if res is None:
        raise NotImplementedError(f"einsum {subscripts!r} (pattern {pattern!r}) is not supported: {CASES}; "
                                  "else compute it in steps (matmul, sums, transposes) or with A.to_numpy()")
    from .core import DistArray
    from .expr import Lazy
    if isinstance(res, DistArray):
        return res if res.dtype == rdt else res.astype(rdt)
    if isinstance(res, Lazy):
        return res.eval() if res.dtype == rdt else res.astype(rdt)
    return np.asarray(res).astype(rdt)[()]


def _transposed(x, letters: str, order: str):
    """``x`` (indexed by ``letters``) as a view in ``order`` (no copy when already so)."""
    from .shape import transpose
    if letters == order:
        return x
    return transpose(x, [letters.index(c) for c in order])


def _reduce(x, letters: str, out: str, rdt):
    """The one-operand case with distinct letters: sum over the letters not in ``out``, then
    the transpose to ``out``'s order."""
    gone = tuple(k for k, c in enumerate(letters) if c not in out)
    if gone:
        x = _dist(x).sum(axis=gone if len(gone) < len(letters) else None, dtype=rdt)
        letters = "".join(c for c in letters if c in out)
        if not out:
            return x
    return _transposed(x, letters, out)


def _one(letters: str, out: str, x, rdt, pattern: str):
    if len(set(letters)) == len(letters):
        res = _reduce(x, letters, out, rdt)
        return res.copy() if res is x else res
    if pattern in ("aa->a", "aa->"):
        from .numeric import _diagonal
        d = _diagonal(x, 0, "einsum")
        return d if out else _dist(d).sum(dtype=rdt)
    return None


def _two(ins, out: str, ops, rdt, pattern: str):
    (l1, l2), (a, b) = ins, ops
    if len(set(l1)) != len(l1) or len(set(l2)) != len(l2):
        return None
    a, l1 = _pre_reduce(a, l1, l2 + out, rdt)
    b, l2 = _pre_reduce(b, l2, l1 + out, rdt)
    contracted = [c for c in l1 if c in l2 and c not in out]
    if not contracted:
        return _broadcast_product(a, l1, b, l2, out)
    shared = [c for c in l1 if c in l2]
    if len(contracted) == 1 and shared == contracted and len(l1) <= 2 and len(l2) <= 2:
        return _matmul(a, l1, b, l2, out, contracted[0])
    if set(l2) <= set(l1) or set(l1) <= set(l2):
        big = l1 if set(l2) <= set(l1) else l2
        return _reduce(_dist(_broadcast_product(a, l1, b, l2, big)), big, out, rdt)
    return None


def _pre_reduce(x, letters: str, others: str, rdt):
    """``x`` summed over the letters no other term has (``'ij,k->i'`` sums ``k`` first)."""
    alone = [c for c in letters if c not in others]
    if not alone:
        return x, letters
    kept = "".join(c for c in letters if c in others)
    return _reduce(x, letters, kept, rdt), kept


def _broadcast_product(a, l1: str, b, l2: str, out: str):
    """``a * b`` broadcast to ``out``'s letters (each operand's letters are a subset of them)."""
    from .view import View

    def widen(x, letters):
        if not hasattr(x, "layout") and not hasattr(x, "eval"):        # a 0-d value
            return x
        order = "".join(c for c in out if c in letters)
        v = _transposed(x, letters, order)
        v = v if isinstance(v, View) else View.whole(_dist(v))
        return v[tuple(slice(None) if c in letters else None for c in out)]

    return _dist(np.multiply(widen(a, l1), widen(b, l2)))


def _matmul(a, l1: str, b, l2: str, out: str, k: str):
    """One contracted letter ``k``: ``a`` with ``k`` last times ``b`` with ``k`` first."""
    from .linalg import matmul
    a = _transposed(a, l1, "".join(c for c in l1 if c != k) + k)
    b = _transposed(b, l2, k + "".join(c for c in l2 if c != k))
    res = matmul(a, b)
    got = "".join(c for c in l1 if c != k) + "".join(c for c in l2 if c != k)
    return _transposed(res, got, out) if got != out else res


#: NumPy 2's vector gufuncs as einsum patterns: the core letters of each operand and the output
#: (``vecdot`` and ``vecmat`` conjugate their first operand).
_CORES = {"vecdot": ("z", "z", ""), "matvec": ("xz", "z", "x"), "vecmat": ("z", "zx", "x")}


def vector_gufunc(name: str, a, b, axis=None):
    """Collective: ``np.vecdot`` / ``np.matvec`` / ``np.vecmat`` of operands of any dimensions
    (stacked: the loop dimensions of the two must be equal where both have them), as the
    einsum of the pattern they mean (``'pz,pz->p'`` for stacked vector dots)."""
    ca, cb, co = _CORES[name]
    na, nb = np.ndim(a), np.ndim(b)
    if na < len(ca) or nb < len(cb):
        raise ValueError(f"{name}: Input operand {0 if na < len(ca) else 1} does not have enough dimensions "
                         f"(has {na if na < len(ca) else nb}, the gufunc core requires {len(ca) if na < len(ca) else len(cb)})")
    loops = "pqrstuvw"[:max(na - len(ca), nb - len(cb))]
    la, lb = loops[len(loops) - (na - len(ca)):] + ca, loops[len(loops) - (nb - len(cb)):] + cb
    if axis is not None:                     # vecdot's axis=: where the vector axis sits in both operands
        if name != "vecdot":
            raise TypeError(f"np.{name}: axis= applies to np.vecdot only (pgas); use axes=")
        la, lb = (_move_core(t, axis, name) for t in (la, lb))
    _check_gufunc_sizes(name, la, np.shape(a), lb, np.shape(b), set(loops))
    if name in ("vecdot", "vecmat") and np.result_type(a).kind == "c":
        a = np.conjugate(a)
    return einsum(f"{la},{lb}->{loops}{co}", a, b)


def _check_gufunc_sizes(name: str, la: str, sa, lb: str, sb, loops) -> None:
    """NumPy's ValueError for a core dimension or loop dimensions that do not match."""
    ea, eb = dict(zip(la, sa)), dict(zip(lb, sb))
    for c in ea.keys() & eb.keys():
        if ea[c] != eb[c] and c not in loops:
            raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0 (size {eb[c]} is "
                             f"different from {ea[c]}): shapes {tuple(sa)} and {tuple(sb)}")
        if ea[c] != eb[c] and 1 not in (ea[c], eb[c]):
            raise ValueError(f"{name}: operands could not be broadcast together: shapes {tuple(sa)} and {tuple(sb)}")


def _move_core(letters: str, axis, name: str) -> str:
    import operator
    n = len(letters)
    axis = operator.index(axis)
    if not -n <= axis < n:
        raise np.exceptions.AxisError(axis, n)
    rest = letters[:-1]
    axis %= n
    return rest[:axis] + letters[-1] + rest[axis:]


NUMPY_FUNCTIONS = {np.einsum: einsum}
