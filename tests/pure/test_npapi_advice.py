"""``pgas.array.npapi.ADVICE`` advises on NumPy functions pgas does not dispatch: every key names
a function that is not in ``HANDLED`` (so the table cannot say that an implemented function is
unavailable), and NEP 18 dispatch of that function raises its advice."""

import numpy as np
import pytest

from pgas.array import npapi


def _numpy_function(name: str):
    f = np
    for part in name.split("."):
        f = getattr(f, part)
    return f


@pytest.mark.parametrize("name", sorted(npapi.ADVICE))
def test_advice_key_is_not_handled(name):
    assert _numpy_function(name) not in npapi.handled(), f"np.{name} is dispatched, yet ADVICE says what to do instead"


@pytest.mark.parametrize("name", sorted(npapi.ADVICE))
def test_dispatch_gives_the_advice(name):
    with pytest.raises(TypeError, match="not supported on pgas arrays") as err:
        npapi.array_function(_numpy_function(name), (), (), {})
    assert npapi.ADVICE[name] in str(err.value)
