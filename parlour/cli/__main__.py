"""``python -m parlour.cli``: the ``parlour`` command."""

import sys

from . import main

sys.exit(main())
