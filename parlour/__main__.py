"""``python -m parlour``: the ``parlour`` command."""

import sys

from .cli import main

if __name__ == "__main__":  # importing the module (the API docs do) runs nothing
    sys.exit(main())
