"""The polyshift examples (examples/stencil5.py, stencil27.py, qcd4d.py) at small sizes,
every way of writing them checked against NumPy."""

import importlib.util
import pathlib

import pytest

from util import collective_verdict

ROOT = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, args", [("stencil5", (9, 3)), ("stencil5", (16, 2)), ("stencil27", (5, 2)),
                                        ("stencil27", (7, 1)), ("qcd4d", (3, 2)), ("qcd4d", (4, 1))])
def test_example_matches_numpy(name, args):
    errors = load(name).check(*args)
    collective_verdict(max(errors.values()) < 1e-12, f"{name}{args}: {errors}")
