"""``python -m pgas.tools.bench NAME [options]``: run a benchmark in this (already launched) job."""

import sys

from pgas.tools.bench import BENCHMARKS, run

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in BENCHMARKS:
        sys.exit(f"usage: python -m pgas.tools.bench NAME [options]; NAME in {', '.join(sorted(BENCHMARKS))}")
    sys.exit(run(sys.argv[1], sys.argv[2:]))
