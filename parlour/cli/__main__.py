"""``python -m parlour.cli``: the ``parlour`` command."""

import sys

from . import main

if __name__ == "__main__":  # importing the module (the API docs do) runs nothing
    sys.exit(main())
