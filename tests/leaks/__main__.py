"""``python -m tests.leaks``: the leak campaign (``nox -s leaks``)."""

import sys

from .campaign import main

sys.exit(main())
