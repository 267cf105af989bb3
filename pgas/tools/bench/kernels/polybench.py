"""PolyBench 4.2.1 kernels of Figure 11 written with pgas: 2mm, fw (floyd-warshall),
trmm, syrk, cholesky, lu, covariance, correlation; each with a NumPy reference of
the same algorithm and PolyBench's initialisation (all extents ``n``).

Sequential loops (LU's and Cholesky's ``k``, Floyd-Warshall's ``k``) are Python
loops around global-view statements; triangular loops are ``pg.forall`` domains
whose inner range depends on the outer variable.  Cholesky and LU run in their
right-looking form, which does every element's subtractions in PolyBench's
order; both restart from the input each step (a factor cannot be factored again).
"""

from __future__ import annotations

import numpy as np

import pgas as pg


def _ij(n, m=None):
    return np.indices((n, n if m is None else m)).astype(float)


# -- 2mm: D := alpha*A*B*C + beta*D -------------------------------------------------
def _mm2_init(n):
    i, j = _ij(n)
    return (((i * j + 1) % n) / n, (i * (j + 1) % n) / n, ((i * (j + 3) + 1) % n) / n, (i * (j + 2) % n) / n)


def mm2_setup(n, dist):
    A, B, C, D = (pg.from_numpy(x, dist=dist) for x in _mm2_init(n))
    return {"A": A, "B": B, "C": C, "D": D, "tmp": pg.zeros((n, n), dist=dist), "n": n}


def mm2_step(s, t):
    A, B, C, D, tmp, n = s["A"], s["B"], s["C"], s["D"], s["tmp"], s["n"]
    alpha, beta = 1.5, 1.2
    tmp[:] = 0.0

    def first(i, j, k):
        tmp[i, j] += alpha * A[i, k] * B[k, j]

    def second(i, j, k):
        D[i, j] += tmp[i, k] * C[k, j]

    pg.forall((range(n), range(n), range(n)), first)
    D[:] *= beta
    pg.forall((range(n), range(n), range(n)), second)


def mm2_ref(n, steps):
    A, B, C, D = _mm2_init(n)
    for _ in range(steps):
        tmp = 1.5 * A @ B
        D = 1.2 * D + tmp @ C
    return {"D": D}


# -- fw: Floyd-Warshall -------------------------------------------------------------
def _fw_init(n):
    i, j = np.indices((n, n))
    path = i * j % 7 + 1
    far = ((i + j) % 13 == 0) | ((i + j) % 7 == 0) | ((i + j) % 11 == 0)
    return np.where(far, 999, path).astype(np.int64)


def fw_setup(n, dist):
    return {"path": pg.from_numpy(_fw_init(n), dist=dist), "n": n}


def fw_step(s, t):
    path, n = s["path"], s["n"]
    for k in range(n):
        pg.forall((range(n), range(n)),
                  lambda i, j: path.__setitem__((i, j), np.minimum(path[i, j], path[i, k] + path[k, j])))


def fw_ref(n, steps):
    p = _fw_init(n)
    for _ in range(steps):
        for k in range(n):                 # row and column k do not change in step k
            p = np.minimum(p, p[:, k:k + 1] + p[k:k + 1, :])
    return {"path": p}


# -- trmm: B := alpha * A^T B, A unit lower triangular ------------------------------
def _trmm_init(n):
    i, j = _ij(n)
    A = np.where(j < i, ((i + j) % n) / n, 0.0)
    np.fill_diagonal(A, 1.0)
    return A, ((n + (i - j)) % n) / n


def trmm_setup(n, dist):
    A, B = _trmm_init(n)
    return {"A": pg.from_numpy(A, dist=dist), "B": pg.from_numpy(B, dist=dist), "n": n}


def trmm_step(s, t):
    A, B, n = s["A"], s["B"], s["n"]

    def body(i, j, k):
        B[i, j] += A[k, i] * B[k, j]           # reads B's rows below i before any write

    pg.forall((range(n), range(n), lambda i: range(i + 1, n)), body)
    B[:] *= 1.5


def trmm_ref(n, steps):
    A, B = _trmm_init(n)
    for _ in range(steps):
        for i in range(n):
            B[i] = 1.5 * (B[i] + A[i + 1:, i] @ B[i + 1:])
    return {"B": B}


# -- syrk: C := alpha*A*A^T + beta*C on the lower triangle -------------------------
def _syrk_init(n):
    i, j = _ij(n)
    return ((i * j + 1) % n) / n, ((i * j + 2) % n) / n


def syrk_setup(n, dist):
    A, C = _syrk_init(n)
    return {"A": pg.from_numpy(A, dist=dist), "C": pg.from_numpy(C, dist=dist), "n": n}


def syrk_step(s, t):
    A, C, n = s["A"], s["C"], s["n"]

    def scale(i, j):
        C[i, j] *= 1.2

    def update(i, j, k):
        C[i, j] += 1.5 * A[i, k] * A[j, k]

    pg.forall((range(n), lambda i: range(i + 1)), scale)
    pg.forall((range(n), lambda i: range(i + 1), range(n)), update)


def syrk_ref(n, steps):
    A, C = _syrk_init(n)
    for _ in range(steps):
        for i in range(n):
            C[i, :i + 1] = 1.2 * C[i, :i + 1] + 1.5 * (A[:i + 1] @ A[i])
    return {"C": C}


# -- cholesky and lu: PolyBench's positive definite input ----------------------------
def _spd(n):
    i, j = np.indices((n, n))
    L = np.where(j <= i, -j / n + 1.0, 0.0)           # C's (-j % n) / n + 1 for 0 <= j < n
    np.fill_diagonal(L, 1.0)
    return L @ L.T


def chol_setup(n, dist):
    return {"A": pg.from_numpy(_spd(n), dist=dist), "A0": _spd(n), "n": n}


def chol_step(s, t):
    A, n = s["A"], s["n"]
    if t:
        A[:] = s["A0"]
    for k in range(n):
        A[k:k + 1, k] = np.sqrt(A[k:k + 1, k])
        A[k + 1:, k] = A[k + 1:, k] / A[k:k + 1, k]

        def update(i, j):
            A[i, j] -= A[i, k] * A[j, k]

        pg.forall((range(k + 1, n), lambda i: range(k + 1, i + 1)), update)


def chol_ref(n, steps):
    A = _spd(n)
    for i in range(n):                                # PolyBench's loops, one row at a time
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] /= A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = np.sqrt(A[i, i])
    return {"A": A}


def lu_setup(n, dist):
    return chol_setup(n, dist)


def lu_step(s, t):
    A, n = s["A"], s["n"]
    if t:
        A[:] = s["A0"]
    for k in range(n - 1):
        pg.forall(range(k + 1, n), lambda i: A.__setitem__((i, k), A[i, k] / A[k, k]))

        def update(i, j):
            A[i, j] -= A[i, k] * A[k, j]

        pg.forall((range(k + 1, n), range(k + 1, n)), update)


def lu_ref(n, steps):
    A = _spd(n)
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]
    return {"A": A}


# -- covariance and correlation (data is n x n) --------------------------------------
def _column_means(data, mean, n):
    def total(j, i):
        mean[j] += data[i, j]

    mean[:] = 0.0
    pg.forall((range(n), range(n)), total)
    mean[:] /= float(n)


def _center(data, mean, n):
    def body(i, j):
        data[i, j] -= mean[j]

    pg.forall((range(n), range(n)), body)


def _upper_products(out, data, n, first):
    """``out[i, j] = sum_k data[k, i] * data[k, j]`` for ``j >= first + i``, mirrored."""
    def product(i, j, k):
        out[i, j] += data[k, i] * data[k, j]

    def mirror(i, j):
        out[j, i] = out[i, j]

    out[:] = 0.0
    pg.forall((range(n), lambda i: range(i + first, n), range(n)), product)
    return mirror


def cov_setup(n, dist):
    i, j = _ij(n)
    D0 = i * j / n
    return {"data": pg.from_numpy(D0, dist=dist), "D0": D0, "mean": pg.zeros(n, dist=dist),
            "cov": pg.zeros((n, n), dist=dist), "n": n}


def cov_step(s, t):
    data, mean, cov, n = s["data"], s["mean"], s["cov"], s["n"]
    if t:
        data[:] = s["D0"]
    _column_means(data, mean, n)
    _center(data, mean, n)
    mirror = _upper_products(cov, data, n, 0)

    def scale(i, j):
        cov[i, j] /= n - 1.0

    pg.forall((range(n), lambda i: range(i, n)), scale)
    pg.forall((range(n), lambda i: range(i + 1, n)), mirror)


def cov_ref(n, steps):
    i, j = _ij(n)
    data = i * j / n
    data = data - data.mean(axis=0)
    cov = data.T @ data / (n - 1.0)
    return {"cov": cov, "data": data}


def corr_setup(n, dist):
    i, j = _ij(n)
    D0 = i * j / n + i
    return {"data": pg.from_numpy(D0, dist=dist), "D0": D0, "mean": pg.zeros(n, dist=dist),
            "stddev": pg.zeros(n, dist=dist), "corr": pg.zeros((n, n), dist=dist), "n": n}


def corr_step(s, t):
    data, mean, std, corr, n = s["data"], s["mean"], s["stddev"], s["corr"], s["n"]
    if t:
        data[:] = s["D0"]
    _column_means(data, mean, n)
    std[:] = 0.0

    def spread(j, i):
        std[j] += (data[i, j] - mean[j]) * (data[i, j] - mean[j])

    pg.forall((range(n), range(n)), spread)
    std[:] = np.sqrt(std[:] / float(n))
    std[:] = pg.where(std[:] <= 0.1, 1.0, std[:])

    def normalise(i, j):
        data[i, j] = (data[i, j] - mean[j]) / (np.sqrt(float(n)) * std[j])

    pg.forall((range(n), range(n)), normalise)
    mirror = _upper_products(corr, data, n, 1)
    pg.forall((range(n), lambda i: range(i + 1, n)), mirror)
    pg.forall(range(n), lambda i: corr.__setitem__((i, i), 1.0))


def corr_ref(n, steps):
    i, j = _ij(n)
    data = i * j / n + i
    mean = data.mean(axis=0)
    std = np.sqrt(((data - mean) ** 2).sum(axis=0) / n)
    std = np.where(std <= 0.1, 1.0, std)
    data = (data - mean) / (np.sqrt(float(n)) * std)
    corr = data.T @ data
    np.fill_diagonal(corr, 1.0)
    return {"corr": corr, "data": data}
