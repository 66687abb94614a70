"""``python -m classroom``: see :mod:`classroom.cli`."""

import sys

from classroom.cli import main

sys.exit(main())
