"""Whether warnings filters turn NumPy's RuntimeWarning into an error (``pgas.exec.fperr.raising``),
read again whenever the filters change: every locale must give the same answer, or the locale
meeting the warning raises it alone in the middle of a statement."""

import warnings

import numpy as np

from pgas.exec import fperr


def test_each_catch_warnings_block_is_read_afresh():
    """Blocks one after another, each with its own filter list: the list freed at the end of
    one block and the next block's list (and its first filter) are made at the same
    addresses, which an answer kept by id took for the same filters (every answer after
    the first block was the first block's)."""
    got = []
    for k in range(50):
        for action in ("error", "ignore") if k % 2 else ("ignore", "error"):
            with warnings.catch_warnings():
                warnings.simplefilter(action)
                got.append((action, fperr.raising()))
    wrong = [(action, said) for action, said in got if said != (action == "error")]
    assert not wrong, f"{len(wrong)} of {len(got)} answers wrong, first {wrong[0]}"


def test_filters_changed_inside_a_block():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not fperr.raising()
        warnings.simplefilter("error", RuntimeWarning)
        assert fperr.raising()
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        assert not fperr.raising()
        warnings.filterwarnings("error", message="divide by zero")
        assert fperr.raising()                  # a filter naming a message may match NumPy's warning
    with warnings.catch_warnings(), np.errstate(divide="raise"):
        warnings.simplefilter("ignore")
        assert fperr.raising()                  # NumPy's own error state raises
