"""``python -m tests.programs``: generated programs against what we publish
(``nox -s programs``)."""

import sys

from .campaign import main

sys.exit(main())
