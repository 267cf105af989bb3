"""pg.checkpoint / pg.restore: a set of arrays and metadata committed as one directory.

Round trips at every dtype and distribution (restored with the saved distribution or
another), ``keep`` pruning, temporaries of interrupted checkpoints ignored and removed,
damaged parts and manifests refused, failed checkpoints leaving the earlier ones, and
bad input raised on every locale alike.  Restoring at another locale count, and locales
killed mid-checkpoint, start jobs of their own: ``tests/faults/test_checkpoint_faults.py``.
"""

import json
import os
import re

import numpy as np
import pytest
from test_io_atomic import fail_alike, flip_byte, no_leftovers, on_zero, raise_after
from test_io import sample
from util import assert_matches, collective_verdict

import pgas as pg
import pgas.io.npy as npy_module
from pgas.array.index import SUPPORTED_DTYPES

P = pg.num_locales
ME = pg.here


@pytest.fixture
def shared_dir(tmp_path):
    """A fresh directory every locale sees: locale 0's tmp_path, broadcast."""
    return pg.comm.bcast(str(tmp_path) if ME == 0 else None, 0)


def listing(directory: str) -> list[str]:
    """Collective: locale 0's sorted listing of ``directory``."""
    return pg.comm.bcast(sorted(os.listdir(directory)) if ME == 0 else None, 0)


#: Every dtype kind (bool, signed, unsigned, float, complex), every item size.
KINDS = [np.bool_, np.int8, np.uint16, np.int16, np.float32, np.int64, np.complex128]
assert all(np.dtype(t) in SUPPORTED_DTYPES for t in KINDS)

DISTS = {"block": lambda: pg.Block(), "cyclic": lambda: pg.Cyclic(), "blockcyclic": lambda: pg.BlockCyclic(3),
         "columns": lambda: pg.Block(grid=(1, P)), "bc_grid": lambda: pg.BlockCyclic((2, 4), grid=(P, 1))}


@pytest.mark.parametrize("dist", list(DISTS))
def test_round_trip_every_dtype_kind(shared_dir, dist):
    d = DISTS[dist]()
    want = {f"a_{np.dtype(t).name}": sample((13, 5), t, k) for k, t in enumerate(KINDS)}
    arrays = {k: pg.from_numpy(x, dist=d) for k, x in want.items()}
    meta = {"t": 0.125, "n": np.int64(7), "tag": "run", "nested": {"list": [1, 2.5, None], "ok": True}}
    out = pg.checkpoint(shared_dir, step=12, meta=meta, **arrays)
    collective_verdict(out == os.path.join(shared_dir, "step-000012"), out)
    ck = pg.restore(shared_dir)
    collective_verdict(ck.step == 12 and ck.path == out, repr(ck))
    collective_verdict(ck.meta == {"t": 0.125, "n": 7, "tag": "run", "nested": {"list": [1, 2.5, None], "ok": True}},
                       repr(ck.meta))
    collective_verdict(sorted(ck) == sorted(want), repr(ck))
    for name, x in want.items():
        collective_verdict(ck[name].dist == arrays[name].dist, f"{name}: {ck[name].dist} != {arrays[name].dist}")
        assert_matches(ck[name], x, rtol=0)
    assert_matches(ck.a_float32, want["a_float32"], rtol=0)          # attribute access
    if dist == "block":                                              # another distribution for all
        ck = pg.restore(shared_dir, dist=pg.Cyclic())
        for name, x in want.items():
            collective_verdict(ck[name].dist.kind == "cyclic", str(ck[name].dist))
            assert_matches(ck[name], x, rtol=0)
    ck = pg.restore(shared_dir, step=12, dist={"a_int8": pg.BlockCyclic(2)})   # for one array
    collective_verdict(ck.a_int8.dist.kind == "block-cyclic" and ck.a_int16.dist == arrays["a_int16"].dist,
                       f"{ck.a_int8.dist} {ck.a_int16.dist}")
    for name in ("a_int8", "a_int16"):
        assert_matches(ck[name], want[name], rtol=0)


@pytest.mark.parametrize("shape", [(0,), (1,), (29,), (3, 4, 5), (2, 3, 2, 3)])
def test_round_trip_shapes(shared_dir, shape):
    x = sample(shape, np.float64)
    arrays = {"b": pg.from_numpy(x), "c": pg.from_numpy(x, dist=pg.Cyclic()),
              "k": pg.from_numpy(x, dist=pg.BlockCyclic(2))}
    pg.checkpoint(shared_dir, step=0, **arrays)
    for dist in (None, pg.Cyclic(), pg.BlockCyclic(3)):          # None: each as saved
        ck = pg.restore(shared_dir, dist=dist)
        for name in arrays:
            assert_matches(ck[name], x, rtol=0)


def test_ghost_cells_are_restored(shared_dir):
    x = sample((12, 7), np.float64)
    G = pg.zeros((12, 7), ghosts=(1, 2))
    G[...] = pg.from_numpy(x)
    pg.checkpoint(shared_dir, step=1, g=G)
    ck = pg.restore(shared_dir)
    collective_verdict(ck.g.layout.ghosts == (1, 2), str(ck.g.layout.ghosts))
    assert_matches(ck.g, x, rtol=0)
    ck = pg.restore(shared_dir, dist=pg.Cyclic())                   # ghost cells need Block: none
    collective_verdict(not ck.g.layout.ghosts, str(ck.g.layout.ghosts))
    assert_matches(ck.g, x, rtol=0)


def test_each_array_is_a_npy_file_numpy_reads(shared_dir):
    x = sample((9, 4), np.int32)
    out = pg.checkpoint(shared_dir, step=3, meta=[1, "two"], u=pg.from_numpy(x, dist=pg.Cyclic()))
    ok = np.array_equal(np.load(os.path.join(out, "u.npy")), x) if ME == 0 else True
    collective_verdict(ok, "np.load of u.npy")
    assert_matches(pg.load(os.path.join(out, "u.npy")), x, rtol=0)
    collective_verdict(listing(out) == ["pgas-checkpoint.json", "u.npy"], str(listing(out)))
    collective_verdict(pg.restore(shared_dir).meta == [1, "two"], "meta")


def test_keep_prunes_older_complete_checkpoints(shared_dir):
    x = np.arange(20.0)
    for s in range(5):
        pg.checkpoint(shared_dir, step=s, keep=2, u=pg.from_numpy(x + s))
        want = [f"step-{k:06d}" for k in range(max(0, s - 1), s + 1)]
        collective_verdict(listing(shared_dir) == want, f"{listing(shared_dir)} != {want}")
    for s in (3, 4):
        assert_matches(pg.restore(shared_dir, step=s).u, x + s, rtol=0)
    pg.checkpoint(shared_dir, step=5, keep=None, u=pg.from_numpy(x + 5))
    pg.checkpoint(shared_dir, step=6, keep=1, u=pg.from_numpy(x + 6))
    collective_verdict(listing(shared_dir) == ["step-000006"], str(listing(shared_dir)))
    # a restart from an earlier step: the later checkpoints are not pruned, the newest is restored
    pg.checkpoint(shared_dir, step=2, keep=1, u=pg.from_numpy(x + 2))
    collective_verdict(listing(shared_dir) == ["step-000002", "step-000006"], str(listing(shared_dir)))
    collective_verdict(pg.restore(shared_dir).step == 6, "newest")
    pg.checkpoint(shared_dir, step=6, keep=3, u=pg.from_numpy(x - 1))  # the same step again: replaced
    assert_matches(pg.restore(shared_dir).u, x - 1, rtol=0)
    collective_verdict(listing(shared_dir) == ["step-000002", "step-000006"], str(listing(shared_dir)))


def test_leftover_temporary_is_ignored_then_removed(shared_dir):
    x = np.arange(30.0)
    pg.checkpoint(shared_dir, step=1, u=pg.from_numpy(x))

    def leftovers():                      # what interrupted checkpoints leave, and an incomplete copy
        os.makedirs(os.path.join(shared_dir, ".step-000002.pgas-tmp-123-abcd0123"))
        with open(os.path.join(shared_dir, ".step-000002.pgas-tmp-123-abcd0123", "u.npy"), "wb") as f:
            f.write(b"partial")
        os.makedirs(os.path.join(shared_dir, ".step-000000.pgas-old-9-00ff00ff"))
        os.makedirs(os.path.join(shared_dir, "step-000007"))               # no manifest: not complete
    on_zero(leftovers)
    ck = pg.restore(shared_dir)
    collective_verdict(ck.step == 1, str(ck.step))
    assert_matches(ck.u, x, rtol=0)
    with pytest.raises(FileNotFoundError, match="no complete checkpoint of step 7"):
        pg.restore(shared_dir, step=7)
    pg.checkpoint(shared_dir, step=2, keep=3, u=pg.from_numpy(x + 2))
    collective_verdict(listing(shared_dir) == ["step-000001", "step-000002", "step-000007"], str(listing(shared_dir)))
    assert_matches(pg.restore(shared_dir).u, x + 2, rtol=0)


def test_damaged_part_is_refused_naming_the_array_and_part(shared_dir):
    n = 6 * max(P, 2)
    x, y = np.arange(n * 3.0).reshape(n, 3), np.arange(n, dtype=np.int64)
    out = pg.checkpoint(shared_dir, step=4, u=pg.from_numpy(x), v=pg.from_numpy(y, dist=pg.Cyclic()))
    manifest = pg.comm.bcast(json.load(open(os.path.join(out, "pgas-checkpoint.json"))) if ME == 0 else None, 0)
    sums = manifest["arrays"]["v"]["sums"]
    k = len(sums["parts"]) - 1
    r0, r1 = sums["parts"][k]["rows"]
    at = sums["offset"] + r0 * 8 + 1
    path = os.path.join(out, "v.npy")
    on_zero(lambda: flip_byte(path, at))
    for dist in (None, pg.Block(), pg.Cyclic(), pg.BlockCyclic(5)):
        with pytest.raises(ValueError, match=rf"checkpoint step 4, array 'v': .*v\.npy: checksum mismatch in part {k} "
                                             rf"\(rows {r0}:{r1}, .*written by locale {k} of {P}"):
            pg.restore(shared_dir, dist=dist)
    on_zero(lambda: flip_byte(path, at))
    assert_matches(pg.restore(shared_dir).v, y, rtol=0)
    # a bit of the file's copy of a part's checksum, or of the metadata, flipped in the manifest
    mpath = os.path.join(out, "pgas-checkpoint.json")
    text = pg.comm.bcast(open(mpath).read() if ME == 0 else None, 0)
    on_zero(lambda: open(mpath, "w").write(text.replace('"step": 4', '"step": 5', 1)))
    with pytest.raises(ValueError, match="checksum mismatch in the checkpoint's manifest"):
        pg.restore(shared_dir)
    on_zero(lambda: open(mpath, "w").write(text[:-20]))
    with pytest.raises(ValueError, match="not a pgas checkpoint manifest"):
        pg.restore(shared_dir)
    on_zero(lambda: open(mpath, "w").write(text))
    on_zero(lambda: os.remove(os.path.join(out, "u.npy")))
    with pytest.raises(FileNotFoundError, match="u.npy"):
        pg.restore(shared_dir)


@pytest.mark.parametrize("fault", ["fsize all", "fsize last", "raise on 0", "raise on last"])
def test_failed_checkpoint_keeps_the_earlier_ones(shared_dir, fault):
    if fault == "fsize last" and P == 1:
        pytest.skip("same as 'fsize all' at one locale")
    rng = np.random.default_rng(0)
    old = rng.standard_normal(1 << 17)
    pg.checkpoint(shared_dir, step=1, keep=1, u=pg.from_numpy(old))
    big = pg.from_numpy(rng.standard_normal(max(2, P) * (1 << 19)))     # 4 MiB per locale: past the 2 MiB limit
    fail_alike(lambda: pg.checkpoint(shared_dir, step=2, keep=1, u=pg.zeros(5), big=big), fault,
               lambda k: raise_after(npy_module, "write_darray", k))
    collective_verdict(listing(shared_dir) == ["step-000001"], str(listing(shared_dir)))
    ck = pg.restore(shared_dir)
    collective_verdict(ck.step == 1, str(ck.step))
    assert_matches(ck.u, old, rtol=0)
    no_leftovers(os.path.join(shared_dir, "step-000001"), ["pgas-checkpoint.json", "u.npy"])


def raised_alike(call, kind, pattern: str) -> None:
    """Collective: ``call()`` raises ``kind`` on every locale, with one message matching ``pattern``."""
    err = None
    try:
        call()
    except Exception as e:                # noqa: BLE001 - checked on every locale below
        err = e
    collective_verdict(isinstance(err, kind), lambda: f"raised {type(err).__name__}: {err}")
    text = re.sub(r"^\w+ on locale \d+: ", "", str(err))
    collective_verdict(re.search(pattern, text) is not None, text)
    texts = pg.comm.allgather(text)
    collective_verdict(len(set(texts)) == 1, f"locales raised different errors: {texts}")


def test_bad_input_is_refused_on_every_locale(shared_dir):
    A = pg.arange(10.0)
    afile = os.path.join(shared_dir, "a_file")
    on_zero(lambda: open(afile, "w").write("x"))
    cases = [
        (lambda: pg.checkpoint(shared_dir, step=1, u=np.arange(3.0)), TypeError, "u= must be a DistArray, got ndarray"),
        (lambda: pg.checkpoint(shared_dir, step=1, u=A[2:]), TypeError, "u= must be a DistArray"),
        (lambda: pg.checkpoint(shared_dir, step=1), ValueError, "no arrays given"),
        (lambda: pg.checkpoint(shared_dir, step=-1, u=A), ValueError, "step must be an integer at least 0"),
        (lambda: pg.checkpoint(shared_dir, step=1.5, u=A), ValueError, "step must be an integer"),
        (lambda: pg.checkpoint(shared_dir, step=True, u=A), ValueError, "step must be an integer"),
        (lambda: pg.checkpoint(shared_dir, step=1, keep=0, u=A), ValueError, "keep must be a positive integer"),
        (lambda: pg.checkpoint(shared_dir, step=1, **{"a b": A}), ValueError, "'a b' is not a Python identifier"),
        (lambda: pg.checkpoint(shared_dir, step=1, meta={"x": object()}, u=A), TypeError, "JSON"),
        (lambda: pg.checkpoint(None, step=1, u=A), TypeError, "dir must be a path"),
        (lambda: pg.checkpoint(afile, step=1, u=A), NotADirectoryError, "exists and is not a directory"),
        (lambda: pg.checkpoint(os.path.join(afile, "sub"), step=1, u=A), OSError, "a_file"),
        (lambda: pg.restore(afile), NotADirectoryError, "is not a directory"),
        (lambda: pg.restore(os.path.join(shared_dir, "none")), FileNotFoundError, "no checkpoint directory"),
        (lambda: pg.restore(shared_dir), FileNotFoundError, "holds no complete checkpoint"),
        (lambda: pg.restore(shared_dir, step="3"), ValueError, "step must be an integer"),
        (lambda: pg.restore(shared_dir, dist="block"), TypeError, "dist must be a Distribution"),
    ]
    for call, kind, pattern in cases:
        raised_alike(call, kind, pattern)
    collective_verdict(listing(shared_dir) == ["a_file"], str(listing(shared_dir)))
    pg.checkpoint(shared_dir, step=1, u=A)
    raised_alike(lambda: pg.restore(shared_dir, step=2), FileNotFoundError, r"no complete checkpoint of step 2 .*\[1\]")
    raised_alike(lambda: pg.restore(shared_dir, dist={"w": pg.Block()}), ValueError, r"dist names \['w'\]")
    raised_alike(lambda: pg.restore(shared_dir, dist={"u": 3}), TypeError, r"dist\['u'\] must be a Distribution")
    ck = pg.restore(shared_dir)
    raised_alike(lambda: ck.w, AttributeError, "holds no array 'w'")
