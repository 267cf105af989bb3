"""The standard's optional extensions ``linalg`` and ``fft``, gathered.

``linalg``'s ``matmul``, ``matrix_transpose``, ``tensordot`` and ``vecdot`` are the main namespace's
(the standard defines them as the same functions), distributed as :mod:`.functions` says; the
extensions' other functions gather their operands to every locale, compute NumPy's
``numpy.linalg`` / ``numpy.fft`` result there and distribute it again.
"""

from __future__ import annotations

import types

import numpy as np

from .arrays import gathered, is_dist, wrap

LINALG = ("cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_power",
          "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
          "tensordot", "trace", "vecdot", "vector_norm")
FFT = ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift")


def _extension(name: str, source, names, extra: dict) -> types.ModuleType:
    mod = types.ModuleType(f"pgas.array_api.{name}", f"The array API standard's ``{name}`` extension over pgas "
                                                     "arrays: every function gathers (collective).")
    for n in names:
        setattr(mod, n, gathered(getattr(source, n), n, f"``{name}.{n}`` of the array API standard, as "
                                                        f"NumPy's ``numpy.{name}.{n}``."))
    for n, f in extra.items():
        setattr(mod, n, f)
    mod.__all__ = sorted(set(names) | set(extra))
    return mod


#: ``linalg`` functions that are the main namespace's own.
SHARED = ("matmul", "matrix_transpose", "tensordot", "vecdot")


def linalg(functions: dict) -> types.ModuleType:
    """The ``linalg`` extension; :data:`SHARED` are the namespace's ``functions`` of those names."""
    return _extension("linalg", np.linalg, [n for n in LINALG if n not in SHARED],
                      {n: functions[n] for n in SHARED})


def _frequencies(name: str):
    npfunc = getattr(np.fft, name)

    def impl(n, /, *, d=1.0, dtype=None, device=None):
        from .device import check
        check(device)
        return wrap(npfunc(n, d).astype(np.float64 if dtype is None else dtype))
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"Collective: the sample frequencies of ``numpy.fft.{name}``, computed on every locale."
    return impl


def fft() -> types.ModuleType:
    """The ``fft`` extension."""
    return _extension("fft", np.fft, FFT, {n: _frequencies(n) for n in ("fftfreq", "rfftfreq")})


def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """Collective for distributed ``x``: NumPy's ``lib.stride_tricks.sliding_window_view``, a view
    with no copy (:func:`pgas.array.shape.sliding_window_view`); read-only."""
    if is_dist(x):
        return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis, subok=subok, writeable=writeable)
    return np.lib.stride_tricks.sliding_window_view(np.asarray(x), window_shape, axis, subok=subok,
                                                    writeable=writeable)


def lib() -> types.ModuleType:
    """``lib.stride_tricks.sliding_window_view``: not in the standard; xarray's ``rolling`` calls it
    through the namespace, as NumPy's and Dask's have it."""
    mod = types.ModuleType("pgas.array_api.lib", "NumPy's lib functions that libraries reach through the namespace.")
    tricks = types.ModuleType("pgas.array_api.lib.stride_tricks", "``sliding_window_view``, distributed as a view.")
    tricks.sliding_window_view = _sliding_window_view
    tricks.__all__ = ["sliding_window_view"]
    mod.stride_tricks = tricks
    mod.__all__ = ["stride_tricks"]
    return mod


def numpy_names(functions: dict) -> dict:
    """Functions outside the standard that xarray calls through a non-NumPy namespace, as NumPy's and
    Dask's namespaces have them: ``transpose`` (the namespace's ``permute_dims``; axes reversed by
    default) and ``median`` (distributed, :mod:`pgas.array.quantiles`; xarray's ``median(skipna=False)``)."""
    def transpose(x, /, axes=None):
        """``numpy.transpose``: the namespace's ``permute_dims`` (a distributed copy)."""
        return functions["permute_dims"](x, tuple(range(x.ndim))[::-1] if axes is None else tuple(axes))

    def median(x, /, axis=None, keepdims=False):
        """Collective: ``numpy.median`` (distributed for distributed ``x``)."""
        return wrap(np.median(x if is_dist(x) else np.asarray(x), axis=axis, keepdims=keepdims))
    return {"transpose": transpose, "median": median}
