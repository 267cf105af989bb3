"""A heat field with coordinates: pgas computes, xarray labels, selects and reduces.

    pgas run -n 2 docs/examples/xarray_heat.py
"""

import os
import tempfile
import warnings

import numpy as np
import xarray as xr

import pgas as pg

ny, nx, steps, alpha = 40, 64, 30, 0.2
y = np.linspace(0.0, 1.0, ny)                 # metres
x = np.linspace(0.0, 2.0, nx)

T0 = np.zeros((ny, nx))
T0[ny // 4: ny // 2, nx // 4: nx // 2] = 100.0

# --- the simulation: global-view statements on a DistArray ----------------------------
T, U = pg.from_numpy(T0), pg.zeros((ny, nx))
for _ in range(steps):
    U[1:-1, 1:-1] = T[1:-1, 1:-1] + alpha * (
        T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:] - 4 * T[1:-1, 1:-1])
    T, U = U, T

# --- the analysis: an xarray DataArray over the same distributed data -------------------
field = xr.DataArray(T, dims=("y", "x"), coords={"y": y, "x": x}, name="temperature",
                     attrs={"units": "K"})
with warnings.catch_warnings():
    warnings.simplefilter("error", pg.GatherWarning)     # none of these gathers the field
    profile = field.mean(dim="y")                         # distributed reduction, labelled by x
    window = field.sel(x=slice(0.5, 1.0))                 # a view: labels to slices
    smooth = field.rolling(x=5, center=True).mean()       # a sliding window over the view
    anomaly = field - field.mean()                        # element-wise, with a scalar mean
hottest_x = float(profile.idxmax())                       # collective, like every reduction
mean = float(field.mean())

# --- save with pgas's writer, read back with xarray alone, and distributed again --------
store = os.path.join(tempfile.gettempdir(), f"pgas-xarray-heat-{os.getppid()}.zarr")
pg.to_zarr(field, store)                  # each locale writes its chunks; xarray's layout
back = pg.open_dataarray(store)           # data distributed again, coordinates on every locale

# --- the same in NumPy and plain xarray -------------------------------------------------
G = T0.copy()
for _ in range(steps):
    H = G.copy()
    H[1:-1, 1:-1] = G[1:-1, 1:-1] + alpha * (
        G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:] - 4 * G[1:-1, 1:-1])
    G = H
ref = xr.DataArray(G, dims=("y", "x"), coords={"y": y, "x": x})

checks = {
    "profile": np.allclose(profile.data.to_numpy(), ref.mean(dim="y").values),
    "window": np.allclose(window.data.to_numpy(), ref.sel(x=slice(0.5, 1.0)).values),
    "smooth": np.allclose(smooth.data.to_numpy(), ref.rolling(x=5, center=True).mean().values, equal_nan=True),
    "anomaly": np.allclose(anomaly.data.to_numpy(), (ref - ref.mean()).values),
    "idxmax": hottest_x == float(ref.mean(dim="y").idxmax()),
    "reopened": np.array_equal(back.data.to_numpy(), G) and back.attrs["units"] == "K"
                and np.array_equal(back["x"].values, x),
}
if pg.here == 0:
    on_disk = xr.open_zarr(store)["temperature"]          # plain xarray, one process
    checks["xarray reads it"] = np.allclose(on_disk.values, G) and on_disk.dims == ("y", "x")
    print(f"hottest column at x = {hottest_x:.3f} m; mean {mean:.3f} K; "
          f"window {dict(window.sizes)}; checks: {', '.join(k for k, v in checks.items() if v)}")
pg.barrier()
if pg.here == 0:
    import shutil
    shutil.rmtree(store, ignore_errors=True)
if not all(checks.values()):
    raise SystemExit(f"locale {pg.here}: mismatch in {[k for k, v in checks.items() if not v]}")
