"""``python -m bayescheck`` is the ``bayescheck`` command."""

import sys

from bayescheck.reports.cli import main

sys.exit(main())
