"""``python -m bayescheck.reports`` is the ``bayescheck`` command."""

import sys

from .cli import main

sys.exit(main())
