"""The package's layers import only downwards, and no private name crosses a package.

Reads every module's imports (module level and inside functions) with :mod:`ast`:

- ``comm`` < ``layout`` < ``plan`` < ``exec`` < ``array`` < ``io``, ``random`` < ``tools``: a module imports
  only its own package and packages below it; ``pgas/__init__.py`` (the public API) anything but ``tools``;
- ``layout`` and ``plan`` are pure: nothing of ``comm``, no ``mpi4py``; only ``pgas/comm`` imports ``mpi4py``;
- no private name (``_x``, or a private module) is imported from another package;
- ``pgas/numbacache.py`` imports nothing of pgas.

The rules are checked on synthetic sources too, so a test shows that a rule that is broken fails.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2] / "pgas"

#: Rank of each top-level part of the package; a module may import ranks at or below its own.
RANK = {"numbacache": 0, "__main__": 7, "comm": 1, "layout": 2, "plan": 3, "exec": 4, "array": 5, "io": 6, "random": 6,
        "tools": 7}
#: Parts that must not import these (beyond the ranking).
PURE = {"layout": {"comm"}, "plan": {"comm"}}


def modules() -> dict[str, str]:
    """``{dotted module name: source}`` of every module of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path.read_text()
    return out


def imports(name: str, source: str, is_package: bool):
    """``(line, imported module, imported names)`` of every import in ``source`` (relative ones resolved)."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield node.lineno, mod, [a.name for a in node.names]


def part(dotted: str) -> str | None:
    """The top-level part of the package a dotted name lies in (``None`` for ``pgas`` itself or outside)."""
    bits = dotted.split(".")
    if bits[0] != "pgas" or len(bits) < 2:
        return None
    return bits[1]


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def violations(mods: dict[str, str], packages: set[str] | None = None) -> list[str]:
    """Every broken rule in ``mods`` (``{dotted name: source}``), as readable lines."""
    packages = packages if packages is not None else {m for m in mods if (ROOT.parent / m.replace(".", "/")).is_dir()}
    bad = []
    for name, source in mods.items():
        mine = part(name)
        for line, mod, names in imports(name, source, name in packages):
            where = f"{name}:{line}"
            if mod.split(".")[0] == "mpi4py" and mine != "comm":
                bad.append(f"{where} imports mpi4py (only pgas.comm may)")
            theirs = part(mod)
            if mod == "pgas" and names:
                subs = [n for n in names if n in RANK]
                theirs_list = subs or [None]
            else:
                theirs_list = [theirs]
            for theirs in theirs_list:
                if mod.split(".")[0] != "pgas" or theirs == mine:
                    continue
                if mine is None:                                     # pgas/__init__.py: the public API
                    if theirs == "tools":
                        bad.append(f"{where} imports pgas.tools (the library never imports the tools)")
                    continue
                if mine == "numbacache":
                    bad.append(f"{where} imports {mod} (numbacache imports nothing of pgas)")
                    continue
                if theirs is None:
                    if mine != "tools":
                        bad.append(f"{where} imports the top-level pgas package from below it")
                    continue
                if theirs not in RANK or mine not in RANK:
                    bad.append(f"{where} imports {mod}: {theirs if theirs not in RANK else mine} has no layer")
                    continue
                if RANK[theirs] > RANK[mine]:
                    bad.append(f"{where} imports {mod}: {mine} lies below {theirs}")
                if theirs in PURE.get(mine, ()):
                    bad.append(f"{where} imports {mod}: {mine} is pure")
                hidden = [n for n in names if private(n)] + [b for b in mod.split(".")[2:] if private(b)]
                if hidden:
                    bad.append(f"{where} takes private {', '.join(hidden)} from {mod} (another package)")
    return bad


def test_the_package_imports_only_downwards_and_no_private_name_crosses_a_package():
    bad = violations(modules())
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name, source", [
    ("pgas.exec.run", "from ..array import core\n"),                       # the engine reaching the front end
    ("pgas.exec.run", "def f():\n    from pgas.array.view import View\n"),  # ... inside a function
    ("pgas.comm.runtime", "from pgas import exec\n"),                        # comm reaching up
    ("pgas.plan.planner", "from ..comm import runtime\n"),                   # plan is pure
    ("pgas.layout.dimmap", "import mpi4py\n"),                               # mpi4py outside comm
    ("pgas.array.core", "from ..exec.store import _private\n"),              # a private name across packages
    ("pgas.io.npy", "from ..comm import _window\n"),                         # a private module across packages
    ("pgas.array.core", "import pgas.tools.bench\n"),                        # the library importing the tools
    ("pgas", "from .tools import cli\n"),
])
def test_each_rule_fails_when_broken(name, source):
    packages = {"pgas", "pgas.exec", "pgas.comm", "pgas.plan", "pgas.layout", "pgas.array", "pgas.io", "pgas.tools"}
    assert violations({name: source}, packages), f"{name}: {source!r} should break a rule"


@pytest.mark.parametrize("name, source", [
    ("pgas.array.core", "from ..exec import run\nfrom ..comm import runtime\n"),
    ("pgas.tools.cli", "import pgas\nfrom pgas.array import core\n"),
    ("pgas.exec.run", "from . import _helpers\nimport numpy\n"),
])
def test_downward_and_outside_imports_pass(name, source):
    packages = {"pgas", "pgas.exec", "pgas.comm", "pgas.array", "pgas.tools"}
    assert violations({name: source}, packages) == []
