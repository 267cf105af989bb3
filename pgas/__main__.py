"""``python -m pgas ...``: the ``pgas`` command (:mod:`pgas.tools.cli`)."""

import sys

from pgas.tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
