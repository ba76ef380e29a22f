"""``python -m clawbook``: the same as the ``clawbook`` command."""

import sys

from clawbook.cli import main

sys.exit(main())
