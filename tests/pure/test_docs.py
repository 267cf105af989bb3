"""Every public name of pgas is documented."""

import inspect

import pytest

import pgas


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
