"""NumPy's quantile arithmetic on a sorted sample known at a few ranks only (pure; no MPI).

``np.quantile(a, q, method=...)`` of ``n`` values reads the sorted values at a
few positions (two per quantile at most) and interpolates between them.  Which
positions, and the interpolation, depend on ``n``, ``q`` and the method only:
:func:`needed` lists them; :func:`quantile` repeats NumPy's own computation
(``numpy.lib._function_base_impl._quantile``: its virtual indexes, gammas and
``_lerp``, in the same dtypes and the same order of operations) from the values
at those positions, so the result is bit for bit NumPy's.  :func:`median_ranks`
and :func:`median` do the same for ``np.median`` (the mean of the one or two
middle values).
"""

from __future__ import annotations

import numpy as np


def _gamma_mask(shape, default_value, conditioned_value, where):
    out = np.full(shape, default_value)
    np.copyto(out, conditioned_value, where=where, casting="unsafe")
    return out


def _to_boundaries(index, condition):
    previous = np.floor(index)
    res = _gamma_mask(index.shape, previous + 1, previous, condition(index - previous, index)).astype(np.intp)
    res[res < 0] = 0
    return res


def _virtual(n, q, alpha: float, beta: float):
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


#: NumPy's methods: (virtual index from n and q, the gamma fix or None for a discrete method).
METHODS = {
    "inverted_cdf": (lambda n, q: _to_boundaries(n * q - 1, lambda g, _: g == 0), None),
    "averaged_inverted_cdf": (lambda n, q: n * q - 1,
                              lambda g, _: _gamma_mask(g.shape, 1., 0.5, g == 0)),
    "closest_observation": (lambda n, q: _to_boundaries(n * q - 1 - 0.5,
                                                        lambda g, i: (g == 0) & (np.floor(i) % 2 == 1)), None),
    "interpolated_inverted_cdf": (lambda n, q: _virtual(n, q, 0, 1), lambda g, _: g),
    "hazen": (lambda n, q: _virtual(n, q, 0.5, 0.5), lambda g, _: g),
    "weibull": (lambda n, q: _virtual(n, q, 0, 0), lambda g, _: g),
    "linear": (lambda n, q: (n - 1) * q, lambda g, _: g),
    "median_unbiased": (lambda n, q: _virtual(n, q, 1 / 3.0, 1 / 3.0), lambda g, _: g),
    "normal_unbiased": (lambda n, q: _virtual(n, q, 3 / 8.0, 3 / 8.0), lambda g, _: g),
    "lower": (lambda n, q: np.floor((n - 1) * q).astype(np.intp), None),
    "higher": (lambda n, q: np.ceil((n - 1) * q).astype(np.intp), None),
    "midpoint": (lambda n, q: 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q)),
                 lambda g, i: _gamma_mask(g.shape, 0.5, 0., i % 1 == 0)),
    "nearest": (lambda n, q: np.around((n - 1) * q).astype(np.intp), None),
}


def check_method(method) -> None:
    """NumPy's ValueError for an unknown ``method``."""
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {METHODS.keys()}")


def _positions(n: int, q: np.ndarray, method: str):
    """NumPy's ``(virtual indexes, direct)``: ``direct`` if the indexes are the positions read
    (no interpolation), else ``(previous, next)`` positions as NumPy's ``_get_indexes``."""
    get, fix = METHODS[method]
    vi = np.asanyarray(get(n, q))
    if fix is None or (method == "linear" and np.issubdtype(vi.dtype, np.integer)):
        return vi, None
    previous = np.floor(vi, out=...)
    following = np.add(previous, 1, out=...)
    above = vi >= n - 1
    if above.any():
        previous[above] = -1
        following[above] = -1
    below = vi < 0
    if below.any():
        previous[below] = 0
        following[below] = 0
    return vi, (previous.astype(np.intp), following.astype(np.intp))


def needed(n: int, q: np.ndarray, method: str) -> np.ndarray:
    """The sorted distinct positions (0 to ``n - 1``) of the ``n`` sorted values that NumPy's
    quantiles ``q`` (a validated array) by ``method`` read."""
    vi, pair = _positions(n, q, method)
    idx = [vi] if pair is None else list(pair)
    return np.unique(np.concatenate([np.asarray(i, np.int64).reshape(-1) % n for i in idx]))


def quantile(n: int, q: np.ndarray, method: str, ranks: np.ndarray, values: np.ndarray, weak_q: bool):
    """NumPy's ``_quantile`` of ``n`` sorted values of which ``values`` (a 1-D array of the
    input's dtype) are those at positions ``ranks`` (:func:`needed`)."""
    vi, pair = _positions(n, q, method)

    def at(idx):             # the value at NumPy's (possibly negative) positions, in NumPy's type
        idx = np.asarray(idx)
        return values[np.searchsorted(ranks, idx % n).reshape(idx.shape)]
    if pair is None:
        return np.take(values, np.searchsorted(ranks, np.asarray(vi) % n).reshape(np.shape(vi)), axis=0)
    previous_indexes, next_indexes = pair
    gamma = np.asanyarray(vi - previous_indexes)
    gamma = np.asanyarray(METHODS[method][1](gamma, vi), dtype=vi.dtype)
    gamma = float(gamma) if weak_q else gamma.reshape(vi.shape)
    return _lerp(at(previous_indexes), at(next_indexes), gamma)


def _lerp(a, b, t):
    """NumPy's ``_lerp``: ``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` where ``t >= 0.5``."""
    diff_b_a = b - a
    lerp_interpolation = np.add(a, diff_b_a * t, out=...)
    np.subtract(b, diff_b_a * (1 - t), out=lerp_interpolation, where=t >= 0.5, casting="unsafe",
                dtype=type(lerp_interpolation.dtype))
    if lerp_interpolation.ndim == 0:
        lerp_interpolation = lerp_interpolation[()]
    return lerp_interpolation


def with_nan(result, dtype):
    """What NumPy returns for ``result``'s quantiles of a sample holding a NaN: a NaN of the
    input ``dtype`` for a scalar result, else ``result`` filled with NaN."""
    if np.ndim(result) == 0:
        return np.dtype(dtype).type(np.nan)
    result = np.array(result)
    result[...] = np.nan
    return result


def median_ranks(n: int) -> np.ndarray:
    """The positions of the one or two middle values of ``n`` sorted values."""
    return np.array([n // 2 - 1, n // 2] if n % 2 == 0 else [(n - 1) // 2], np.int64)


def median(values: np.ndarray):
    """NumPy's median from the middle values (:func:`median_ranks`): their mean, as NumPy."""
    return np.mean(values, axis=0)
