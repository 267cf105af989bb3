"""The README's example runs as written, on any number of locales."""

import os
import re

import numpy as np

import pgas as pg
from util import collective_verdict

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_readme_taste_runs_and_matches_numpy(capsys):
    text = open(README).read()
    code = re.search(r"## A taste\n\n```python\n(.*?)```", text, re.S).group(1)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    A = scope["A"]
    G = np.random.default_rng(0).random((64, 64))
    for _ in range(10):
        H = G.copy()
        H[1:-1, 1:-1] = 0.2 * (G[1:-1, 1:-1] + G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:])
        G[1:-1, 1:-1] = H[1:-1, 1:-1]
    collective_verdict(np.allclose(A.to_numpy(), G, rtol=1e-12), "README example differs from NumPy")
    printed = capsys.readouterr().out
    collective_verdict(pg.here != 0 or "messages in the last sweep" in printed, "locale 0 printed nothing")
