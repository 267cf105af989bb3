"""The documentation holds together: every public name of pgas is documented,
every link in README.md and docs/ stays inside the repository (and resolves) or is
a public http(s) URL, and every program shown in a page is the example file it names.

The pages show example programs inline (so that they read the same on a forge as on the
site): a ``<!-- source: PATH -->`` line (PATH relative to the page) stands before a fenced
block that must hold that file exactly.  After editing an example,
``python tests/pure/test_docs.py --write`` copies it into the pages again."""

import inspect
import os
import re
import sys

import pytest

import pgas

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_all_names_exist():
    missing = [name for name in pgas.__all__ if not hasattr(pgas, name)]
    assert not missing, f"pgas.__all__ names missing from the package: {missing}"


@pytest.mark.parametrize("name", pgas.__all__)
def test_public_name_has_docstring(name):
    obj = getattr(pgas, name)
    if not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)):
        # a value such as pg.here: documented by the runtime function giving it, or the package docstring
        assert callable(getattr(pgas.comm, name, None)) or f"pg.{name}" in pgas.__doc__, \
            f"pgas.{name} is a value documented nowhere"
        obj = getattr(pgas.comm, name, pgas)
    doc = inspect.getdoc(obj)
    assert doc and doc.strip(), f"pgas.{name} has no docstring"


@pytest.mark.parametrize("name", [n for n in pgas.__all__ if inspect.isclass(getattr(pgas, n))])
def test_public_class_members_documented(name):
    """Methods and properties have docstrings; slot attributes are listed in the class's
    Attributes section (that is where the API reference shows them)."""
    cls = getattr(pgas, name)
    undocumented = []
    for key, member in vars(cls).items():
        if key.startswith("_"):
            continue
        if inspect.ismemberdescriptor(member):
            if not re.search(rf"^\s*{key}\b.*:", inspect.getdoc(cls) or "", re.M):
                undocumented.append(key)
        elif isinstance(member, (property, staticmethod, classmethod)) or inspect.isfunction(member):
            fn = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
            if not (fn.__doc__ or "").strip():
                undocumented.append(key)
    assert not undocumented, f"pgas.{name}: undocumented public members {undocumented}"


# -- links -------------------------------------------------------------------
def doc_files() -> list[str]:
    """README.md and every Markdown file under docs/ (paths relative to the repository)."""
    out = ["README.md"]
    for folder, _, names in os.walk(os.path.join(ROOT, "docs")):
        out += [os.path.relpath(os.path.join(folder, n), ROOT) for n in sorted(names) if n.endswith(".md")]
    return out


FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")      # [text](target "title")
REFDEF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)                    # [name]: target
AUTO = re.compile(r"<((?:[a-zA-Z][a-zA-Z0-9+.-]*:)[^>\s]+)>")             # <scheme:...>
HTML = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")


def links(text: str) -> list[str]:
    """Every link target of a Markdown text, outside code."""
    text = CODE.sub("", FENCE.sub("", text))
    return [m for pat in (LINK, REFDEF, AUTO, HTML) for m in pat.findall(text)]


def test_link_extraction():
    text = ("[a](docs/x.md) [b](https://example.org/p \"t\") <http://example.org>\n[c]: ../y.md\n"
            "`[not](a link)`\n```\n[nor](this)\n```\n<a href=\"z.html\">z</a>")
    assert links(text) == ["docs/x.md", "https://example.org/p", "../y.md", "http://example.org", "z.html"]


def test_there_are_docs():
    files = doc_files()
    assert "docs/index.md" in files and len(files) > 5, files


@pytest.mark.parametrize("path", doc_files())
def test_links_stay_in_repository_or_are_http(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    bad = []
    for target in links(text):
        scheme = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):", target)
        if scheme:
            if scheme.group(1).lower() not in ("http", "https"):
                bad.append(f"{target}: only http(s) links may leave the repository")
            continue
        file = target.split("#", 1)[0].split("?", 1)[0]
        if not file:
            continue                                  # an anchor on the same page
        if file.startswith("/"):
            bad.append(f"{target}: absolute path (use a path relative to {path})")
            continue
        resolved = os.path.normpath(os.path.join(ROOT, os.path.dirname(path), file))
        if os.path.commonpath([resolved, ROOT]) != ROOT:
            bad.append(f"{target}: leads outside the repository")
        elif not os.path.exists(resolved):
            bad.append(f"{target}: no such file")
    assert not bad, f"{path}:\n  " + "\n  ".join(bad)


def test_no_reference_to_the_workspace():
    """A clone has no ../shared (the workspace's notes): nothing may point there."""
    for path in doc_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            assert "../shared" not in f.read(), f"{path} mentions ../shared"


# -- programs shown inline ----------------------------------------------------
SOURCE = re.compile(r"^<!-- source: (\S+) -->\n(```+)python\n(.*?)^\2$", re.S | re.M)


def inlined(path: str) -> list[tuple[str, str, str]]:
    """``(example path relative to the repository, block text, file text)`` for each
    ``<!-- source: PATH -->`` block of the page ``path``."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    out = []
    for m in SOURCE.finditer(text):
        example = os.path.relpath(os.path.normpath(os.path.join(ROOT, os.path.dirname(path), m.group(1))), ROOT)
        with open(os.path.join(ROOT, example), encoding="utf-8") as f:
            out.append((example, m.group(3), f.read()))
    return out


def write_inlined() -> list[str]:
    """Copy each example into the pages' ``<!-- source: -->`` blocks; the pages changed."""
    changed = []
    for path in doc_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()

        def fill(m):
            example = os.path.normpath(os.path.join(ROOT, os.path.dirname(path), m.group(1)))
            with open(example, encoding="utf-8") as f:
                code = f.read().rstrip("\n") + "\n"
            return f"<!-- source: {m.group(1)} -->\n{m.group(2)}python\n{code}{m.group(2)}"

        new = SOURCE.sub(fill, text)
        if new != text:
            with open(os.path.join(ROOT, path), "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(path)
    return changed


def test_no_snippet_markers():
    """Pages hold their code: a snippet include shows as a raw marker on a forge."""
    marked = [p for p in doc_files() if "--8<--" in open(os.path.join(ROOT, p), encoding="utf-8").read()]
    assert not marked, f"snippet markers in {marked}: inline the code under a <!-- source: PATH --> line"


def test_inlined_programs_are_their_examples():
    blocks = [(p, *b) for p in doc_files() for b in inlined(p)]
    assert len(blocks) >= 10, "the pages' inlined example programs were not found"
    stale = [f"{page}: {example}" for page, example, block, code in blocks
             if block.rstrip("\n") != code.rstrip("\n")]
    assert not stale, ("pages showing an older copy of an example (python tests/pure/test_docs.py --write "
                       "copies them again):\n  " + "\n  ".join(stale))


def test_inlined_block_detection():
    text = "<!-- source: x.py -->\n```python\nprint(1)\n```\n"
    assert [(m.group(1), m.group(3)) for m in SOURCE.finditer(text)] == [("x.py", "print(1)\n")]


# -- cross-references in docstrings -------------------------------------------
ROLE = re.compile(r":(?:func|meth|class|attr|data|mod|exc|obj):`~?([^`<]+?)(?:\s*<([^>]+)>)?`")


def _resolve(dotted: str) -> bool:
    """Whether ``pgas.a.b.c`` names a module or an attribute of one."""
    import importlib
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
        except AttributeError:
            return False
        return True
    return False


def _classes() -> dict:
    """Every class defined in pgas (and pgas.tools), by name: ``{name: [class, ...]}``."""
    import importlib
    import pkgutil
    found: dict = {}
    for info in pkgutil.walk_packages(pgas.__path__, "pgas."):
        if info.name.endswith("__main__"):
            continue
        try:
            mod = importlib.import_module(info.name)
        except ImportError:                    # optional dependencies (numba, zarr, ...)
            continue
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and obj.__module__.startswith("pgas"):
                found.setdefault(name, []).append(obj)
    return found


def test_docstring_cross_references_resolve():
    """``:func:`pgas.x.y``` and ``:meth:`Class.member``` in the package's source name things
    that exist (a module moved or a class removed leaves them dangling)."""
    classes = _classes()
    bad = []
    for dirpath, _, names in os.walk(os.path.join(ROOT, "pgas")):
        for fn in names:
            if not fn.endswith(".py"):
                continue
            path = os.path.join(dirpath, fn)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in ROLE.finditer(text):
                target = (m.group(2) or m.group(1)).strip().rstrip("()")
                if target.startswith("pgas."):
                    ok = _resolve(target)
                elif re.fullmatch(r"[A-Z]\w*\.\w+", target):          # Class.member
                    cls, member = target.split(".")
                    ok = any(hasattr(c, member) for c in classes.get(cls, []))
                else:
                    continue
                if not ok:
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{os.path.relpath(path, ROOT)}:{line}: {m.group(0)}")
    assert not bad, "docstring references to names that do not exist:\n" + "\n".join(bad)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/pure/test_docs.py --write   (copy docs/examples into the pages' blocks)")
    print("\n".join(write_inlined()) or "every page is up to date")
