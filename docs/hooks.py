"""MkDocs hook: a line ``<!-- output: python FILE [ARGS] -->`` (or ``pgas run -n N FILE``)
in a page becomes a fenced block holding what that command prints, run while the site
is built, from the repository root, with the interpreter running mkdocs.  A command
that fails fails the build.  All the pages' commands start together when the build
starts (each is a separate job, mostly waiting on MPI start-up), and each page waits
for its own."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"^<!-- output: (.+?) -->$", re.M)
_jobs: dict = {}
_pool: ThreadPoolExecutor | None = None


def argv(command: str) -> list[str]:
    """The process arguments for a marker's command."""
    words = shlex.split(command)
    if words[0] == "python":
        return [sys.executable] + words[1:]
    if words[:2] == ["pgas", "run"]:
        return [sys.executable, "-m", "pgas.tools.cli"] + words[1:]
    raise ValueError(f"docs output marker: {command!r} must start with 'python' or 'pgas run'")


def _run(command: str) -> str:
    done = subprocess.run(argv(command), cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"docs output marker {command!r} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.rstrip()


def on_files(files, config, **kwargs):
    """Start every marker's command of every page."""
    global _pool
    _pool = ThreadPoolExecutor(max_workers=8)
    for f in files.documentation_pages():
        with open(f.abs_src_path, encoding="utf-8") as fh:
            for command in MARK.findall(fh.read()):
                if command not in _jobs:
                    _jobs[command] = _pool.submit(_run, command)
    return files


def on_page_markdown(markdown: str, **kwargs) -> str:
    """Replace the page's markers by their commands' output."""
    return MARK.sub(lambda m: f"```text\n$ {m.group(1)}\n{_jobs[m.group(1)].result()}\n```", markdown)


def on_post_build(config, **kwargs) -> None:
    """Forget the outputs (``mkdocs serve`` rebuilds run them again)."""
    if _pool is not None:
        _pool.shutdown()
    _jobs.clear()
