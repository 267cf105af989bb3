"""The package as a user installs it: the sdist and the wheel are built from the checkout
(``python -m build``; ``pip wheel`` where the ``build`` package is missing, and then no sdist),
the wheel is installed (not editable) into a fresh virtual environment, and everything below
runs from a temporary folder with no source tree on ``sys.path``: the installed copy is
imported, carries what it reads at run time (``py.typed``, the benchmarks' C sources), its
metadata is complete, and the demo (``examples/jacobi.py``, copied) and a smoke test run on
2 locales under the installed ``pgas run``; mypy (where installed) checks user programs
against the installed package's annotations (``py.typed``).  Run without MPI (the jobs start their own):

    python -m pytest -q tests/wheel

It needs the package registry (or pip's cache) for the runtime's dependencies, and takes
about a minute; ``tests/run_mpi.py --full`` (CI) runs it.
"""

import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Files the installed package reads at run time (package-relative).
DATA = ["pgas/py.typed", "pgas/tools/bench/c/stream.c"]

SMOKE = """\
import numpy as np
import pgas as pg

x = np.arange(48.0).reshape(6, 8)
A = pg.from_numpy(x, dist=pg.Block())
B = pg.zeros((6, 8))
B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
want = np.zeros_like(x)
want[1:-1, 1:-1] = 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:])
assert np.allclose(B.to_numpy(), want)
assert float(A.sum()) == x.sum()
if pg.here == 0:
    print("smoke ok", pg.num_locales, pg.__file__)
"""


def _env() -> dict:
    """The environment of a user's shell: nothing pointing at this checkout or at a job around it."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PGAS_JOB_DIR", "PGAS_HANG_SAMPLE")
    return {k: v for k, v in os.environ.items()
            if k not in drop and not k.startswith(("PMI_", "PMIX_", "OMPI_", "HYDRA_"))}


def _run(cmd: list[str], cwd: str, timeout: float = 600, env=None) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The sdist (None without the ``build`` package) and the wheel, built from a copy of the
    checkout's tracked files (nothing a local build left behind can slip in)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src, dist = str(tmp / "src"), str(tmp / "dist")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        if os.path.isfile(os.path.join(ROOT, rel)):
            os.makedirs(os.path.dirname(os.path.join(src, rel)) or src, exist_ok=True)
            shutil.copy2(os.path.join(ROOT, rel), os.path.join(src, rel))
    if importlib.util.find_spec("build") is not None:
        _run([sys.executable, "-m", "build", "--outdir", dist, src], str(tmp), env=dict(os.environ))     # the wheel from the sdist
    else:
        print("the 'build' package is missing: wheel by pip, no sdist")
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", dist, src], str(tmp),
             env=dict(os.environ))
    sdists, wheels = glob.glob(os.path.join(dist, "*.tar.gz")), glob.glob(os.path.join(dist, "*.whl"))
    assert len(wheels) == 1, os.listdir(dist)
    return {"tmp": tmp, "wheel": wheels[0], "sdist": sdists[0] if sdists else None}


@pytest.fixture(scope="module")
def venv(built) -> dict:
    """A fresh virtual environment with the wheel installed, and an empty folder to run in."""
    home = str(built["tmp"] / "venv")
    _run([sys.executable, "-m", "venv", home], str(built["tmp"]))
    py = os.path.join(home, "bin", "python")
    _run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", built["wheel"]], str(built["tmp"]))
    work = built["tmp"] / "work"
    work.mkdir()
    return {"python": py, "pgas": os.path.join(home, "bin", "pgas"), "cwd": str(work), "home": home}


def test_wheel_carries_run_time_files(built):
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    assert not [f for f in DATA if f not in names], f"missing from the wheel: {sorted(set(DATA) - names)}"
    assert not [n for n in names if n.startswith(("tests/", "docs/", "benchmarks/"))]


def test_wheel_metadata(built):
    with zipfile.ZipFile(built["wheel"]) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    fields = [line.split(":", 1)[0] for line in meta.splitlines() if ":" in line and not line.startswith(" ")]
    for field in ("Name", "Version", "Summary", "Requires-Python", "Classifier", "Keywords", "Provides-Extra",
                  "Requires-Dist", "Description-Content-Type"):
        assert field in fields, f"METADATA lacks {field}"
    extras = {line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Provides-Extra:")}
    assert {"io", "plot", "bench", "fast", "test", "docs"} <= extras
    assert "Classifier: Typing :: Typed" in meta
    assert "License-Expression: BSD-3-Clause" in meta
    with zipfile.ZipFile(built["wheel"]) as z:
        licences = [n for n in z.namelist() if ".dist-info/licenses/" in n]
    assert [n.rsplit("/", 1)[1] for n in licences] == ["LICENSE"], licences


def test_sdist_carries_sources(built):
    if built["sdist"] is None:
        pytest.skip("the 'build' package is not installed: no sdist built")
    with tarfile.open(built["sdist"]) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "LICENSE", *DATA} <= names


def test_installed_copy_is_imported(venv):
    out = _run([venv["python"], "-c", "import os, pgas, pgas.tools.bench.stream as s; "
                "print(pgas.__file__); print(os.path.isfile(s.C_SOURCE)); "
                "print(os.path.isfile(os.path.join(os.path.dirname(pgas.__file__), 'py.typed')))"], venv["cwd"])
    where, c_source, typed = out.split()
    assert where.startswith(venv["home"]) and not where.startswith(ROOT), where
    assert c_source == "True" and typed == "True"


def test_demo(venv):
    shutil.copy(os.path.join(ROOT, "examples", "jacobi.py"), venv["cwd"])
    out = _run([venv["pgas"], "run", "-n", "2", "--timeout", "300", "jacobi.py", "64", "4"], venv["cwd"])
    assert out.count("matches NumPy: True") == 2, out


def test_smoke(venv):
    with open(os.path.join(venv["cwd"], "smoke.py"), "w") as f:
        f.write(SMOKE)
    out = _run([venv["pgas"], "run", "-n", "2", "--timeout", "300", "smoke.py"], venv["cwd"])
    assert f"smoke ok 2 {venv['home']}" in out, out
    info = _run([venv["pgas"], "info"], venv["cwd"])
    assert "MPI library:" in info and "unknown" not in info.splitlines()[0], info


def test_user_programs_type_check_against_the_installed_package(venv):
    """mypy reads pgas's annotations from the wheel (it refuses a package without ``py.typed``)."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    with open(os.path.join(venv["cwd"], "smoke.py"), "w") as f:
        f.write(SMOKE)
    programs = ["smoke.py"]
    for rel in ("docs/examples/first_stencil.py", "docs/examples/heat.py", "examples/jacobi.py"):
        shutil.copy(os.path.join(ROOT, rel), venv["cwd"])
        programs.append(os.path.basename(rel))
    tools = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != ROOT]
    env = dict(_env(), **({"PYTHONPATH": os.pathsep.join(tools)} if tools else {}))   # mypy's own path, not ROOT
    out = _run([sys.executable, "-m", "mypy", "--python-executable", venv["python"], "--no-incremental",
                "--follow-imports=silent", *programs], venv["cwd"], env=env)
    assert "Success" in out, out
