"""pgas bench stmt: its argument checks and its correctness reference."""

import pytest
from util import collective_verdict


@pytest.mark.parametrize("argv", [["--warmup", "-1"], ["--steps", "0"], ["--steps", "-2"]])
def test_bench_stmt_rejects_step_counts_that_break_its_check(argv):
    """``--warmup -1`` ran the timed steps from t = -1 and checked them against a
    reference of one step fewer (the run was reported wrong: "ok NO"); ``--steps 0``
    divided by zero after the run.  argparse rejects both."""
    from pgas.tools.bench import stmt
    with pytest.raises(SystemExit):
        stmt.make_parser().parse_args(argv)
    assert stmt.make_parser().parse_args(["--warmup", "0"]).warmup == 0
    assert stmt.make_parser().parse_args([]).warmup == 3


def test_bench_stmt_reference_steps_match_the_steps_run():
    """The correctness check's reference runs as many steps as ran (warm-up and timed),
    for a kernel whose step depends on t (fdtd-2d writes t into a row)."""
    from pgas.tools.bench import stmt
    from pgas.tools.bench.kernels import KERNELS
    k = KERNELS["fdtd-2d"]
    for aggregate, warmup, steps in [(True, 0, 1), (True, 2, 3), (False, 3, 5)]:
        r = stmt.run_one(k, k.tiny, "Cyclic", aggregate, steps, warmup=warmup)
        collective_verdict(r["correct"], f"aggregate={aggregate} warmup={warmup} steps={steps}: wrong")
