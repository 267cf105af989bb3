"""Running a reference code from a benchmark's job (pgas.tools.bench.reference), and the ISx
int32 keys option (no timing asserted)."""

import json
import sys

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import isx, reference
from util import collective_verdict


def test_run_gives_every_locale_the_output():
    res = reference.run([sys.executable, "-c", "print('Mop/s total     =   123.5')"])
    collective_verdict(res["returncode"] == 0 and reference.number(r"Mop/s total\s*=\s*([0-9.]+)", res["stdout"])
                       == 123.5, f"{res}")


def test_a_missing_reference_is_reported_not_raised():
    res = reference.run(["/nonexistent/pgas-reference-binary"])
    collective_verdict(res["returncode"] is None and res["stderr"], f"{res}")
    assert reference.number(r"x = ([0-9]+)", "nothing") is None


def test_a_failing_reference_says_why(capsys):
    res = reference.run([sys.executable, "-c", "import sys; print('libmpi.so.12: cannot open', file=sys.stderr); "
                         "sys.exit(127)"])
    err = capsys.readouterr().err
    collective_verdict(res["returncode"] == 127, f"{res}")
    if pg.here == 0:
        assert "exited with status 127" in err and "libmpi.so.12: cannot open" in err, err


def test_isx_int32_keys(tmp_path):
    path = comm.bcast(str(tmp_path / "isx.json"), 0)
    status = isx.main(["--keys", "5000", "--width", "700", "--key-type", "int32", "--trials", "1", "--out", path])
    collective_verdict(status == 0, f"status {status}")
    if pg.here == 0:
        data = json.load(open(path))
        assert data["key_type"] == "int32" and all(s["verified"] for s in data["styles"])
    keys = isx.make_keys(100, 7, pg.num_locales, pg.here, dtype=np.int32)
    assert keys.dtype == np.int32
    g, c = isx.bucketize(keys, 7, pg.num_locales)
    assert g.dtype == np.int32 and c.sum() == 100
