"""Checkpoints and saves under faults, each case its own job under the bundled ``mpiexec``
(no watchdog: the MPI library alone must end a job whose locale died), with a bound on
its time and a check that no process is left; what it leaves is then read back by a new
job, at the same or another locale count (``prog_checkpoint.py`` says what each job does):

- a locale SIGKILLed during ``pg.save`` or ``pg.checkpoint`` (once its part is written, or
  just before the commit's rename) ends the job; the previous file or checkpoint loads and
  verifies in a new job, and the next checkpoint removes the temporary left behind;
- past a file-size limit (a full disk) a checkpoint and a save fail on every locale with
  the same clear error and leave the previous ones;
- a truncated part and a part with one bit flipped are refused on restore, on every locale,
  naming the array and the part;
- a checkpoint written at 2 locales restores at 1, 3 and 4.

Run without MPI: ``python -m pytest -q tests/faults/test_checkpoint_faults.py``.
"""

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from test_abort import MPIEXEC, plain_job

BOUND = 60            # seconds: jobs run 4 at a time on a small machine; each takes a few

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec beside this Python or on PATH")


def job(n: int, *args: str) -> subprocess.CompletedProcess:
    """``prog_checkpoint.py args`` under ``mpiexec -n n`` (:func:`test_abort.plain_job`)."""
    return plain_job("prog_checkpoint.py", *args, n=n, bound=BOUND)


def lines(r, n: int) -> dict[int, str]:
    """``{locale: text}`` of the ``locale K: text`` lines of a job of ``n`` locales (the first of each)."""
    got = {}
    for line in r.stdout.splitlines():
        m = re.match(r"locale (\d+): (.*)", line)
        if m and int(m.group(1)) not in got:
            got[int(m.group(1))] = m.group(2)
    assert sorted(got) == list(range(n)), f"rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return got


def ok(r, n: int) -> dict[int, str]:
    assert r.returncode == 0, f"rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return lines(r, n)


def died(r) -> None:
    """The job ended with a failure status and no locale finished its script."""
    assert r.returncode != 0, f"{r.stdout}\n{r.stderr}"
    assert "wrote" not in r.stdout and "saved" not in r.stdout, r.stdout


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """``(directories, runs)``: case name -> finished jobs (and ``NAME:listing``, what a killed job
    left in its directory): the jobs that write (some of them killed), then the
    jobs that read back what they left, 4 at a time."""
    base = str(tmp_path_factory.mktemp("ckpt"))
    d = {k: os.path.join(base, k) for k in ("kill_part", "kill_commit", "fsize", "cross", "save")}
    os.makedirs(os.path.join(base, "fsize_file"))
    os.makedirs(d["save"])
    first = {
        "kill_part": (2, "write", d["kill_part"], "1,2", "part"),
        "kill_commit": (2, "write", d["kill_commit"], "1,2", "commit"),
        "kill_save": (2, "save", os.path.join(d["save"], "a.npy"), "part"),
        "fsize": (2, "fsize", d["fsize"], os.path.join(base, "fsize_file", "a.npy")),
        "cross": (2, "write", d["cross"], "1,2,3"),
    }
    with ThreadPoolExecutor(4) as pool:
        done = {k: pool.submit(job, *v) for k, v in first.items()}
        runs = {k: [f.result()] for k, f in done.items()}
    for k in ("kill_part", "kill_commit"):
        runs[f"{k}:listing"] = sorted(os.listdir(d[k]))
    if runs["cross"][0].returncode == 0:               # two damaged copies of the good checkpoint
        for kind in ("truncated", "flipped"):
            shutil.copytree(d["cross"], os.path.join(base, kind))
        damage(os.path.join(base, "truncated", "step-000003", "v.npy"), truncate=True)
        damage(os.path.join(base, "flipped", "step-000003", "w.npy"), truncate=False)
    second = {
        "kill_part": (2, "restore", d["kill_part"], "1", "more"),
        "kill_commit": (3, "restore", d["kill_commit"], "1", "more"),
        "kill_save": (2, "load", os.path.join(d["save"], "a.npy"), "1"),
        **{f"cross{n}": (n, "restore", d["cross"], "3") for n in (1, 3, 4)},
        "refused": (3, "refused", os.path.join(base, "truncated"), os.path.join(base, "flipped")),
    }
    with ThreadPoolExecutor(4) as pool:
        done = {k: pool.submit(job, *v) for k, v in second.items()}
        for k, f in done.items():
            runs.setdefault(k, []).append(f.result())
    return d, runs


def damage(path: str, truncate: bool) -> None:
    """Cut the last 8 bytes off ``path``, or flip one bit of its last element (keeping its times)."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        if truncate:
            f.truncate(st.st_size - 8)
        else:
            f.seek(st.st_size - 3)
            b = f.read(1)
            f.seek(st.st_size - 3)
            f.write(bytes([b[0] ^ 0x10]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("where", ["part", "commit"])
def test_locale_killed_during_checkpoint_keeps_the_previous_one(ran, where):
    d, runs = ran
    killed, again = runs[f"kill_{where}"]
    died(killed)
    # left behind: the previous checkpoint, and at most the interrupted one's temporary
    kept = runs[f"kill_{where}:listing"]
    assert "step-000001" in kept and all(re.fullmatch(r"\.step-000002\.pgas-tmp-.+", k) for k in kept
                                         if k != "step-000001"), kept
    # the new job restored step 1 (at 2 and at 3 locales), then wrote step 2: the temporary is gone
    n = 2 if where == "part" else 3
    got = ok(again, n)
    assert all(t == f"restored step 1 at {n}" for t in got.values()), again.stdout
    assert "locale 0: then ['step-000001', 'step-000002']" in again.stdout, again.stdout


def test_locale_killed_during_save_keeps_the_previous_file(ran):
    d, runs = ran
    killed, again = runs["kill_save"]
    died(killed)
    assert set(ok(again, 2).values()) == {"loaded step 1"}, again.stdout


def test_file_size_limit_fails_alike_and_keeps_the_previous_ones(ran):
    _, runs = ran
    (r,) = runs["fsize"]
    got = {}
    for line in r.stdout.splitlines():
        m = re.match(r"locale (\d+): (checkpoint|save|kept):? (.*)", line)
        if m:
            got.setdefault(m.group(2), {})[int(m.group(1))] = re.sub(r"^(\w+): \w+ on locale \d+: ", r"\1: ", m.group(3))
    assert r.returncode == 0 and sorted(got.get("kept", {})) == [0, 1], f"rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    for what in ("checkpoint", "save"):
        texts = set(got[what].values())
        assert len(texts) == 1, f"{what}: locales raised different errors: {got[what]}"
        text = texts.pop()
        assert text.startswith("OSError") and "File too large" in text, text
    assert got["kept"][0] == "['step-000001'] ['a.npy', 'a.npy.pgas.json']", r.stdout


@pytest.mark.parametrize("n", [1, 3, 4])
def test_checkpoint_written_at_2_restores_at(ran, n):
    _, runs = ran
    wrote = ok(runs["cross"][0], 2)
    assert wrote[0] == "wrote [1, 2, 3]"
    assert set(ok(runs[f"cross{n}"][0], n).values()) == {f"restored step 3 at {n}"}


def test_truncated_or_flipped_part_is_refused(ran):
    _, runs = ran
    (r,) = runs["refused"]
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    got = {}
    for line in r.stdout.splitlines():
        m = re.match(r"locale (\d+): (truncated|flipped): (.*)", line)
        if m:
            got.setdefault(m.group(2), {})[int(m.group(1))] = m.group(3)
    assert sorted(got) == ["flipped", "truncated"] and all(sorted(v) == [0, 1, 2] for v in got.values()), r.stdout
    for text in got["truncated"].values():
        assert re.fullmatch(r"ValueError: checkpoint step 3, array 'v': .*v\.npy: file has \d+ bytes, but its "
                            r"header describes \d+", text), text
    for text in got["flipped"].values():
        assert re.fullmatch(r"ValueError: checkpoint step 3, array 'w': .*w\.npy: checksum mismatch in part 1 "
                            r"\(rows 17:33, .*written by locale 1 of 2\): the data is damaged", text), text
