"""``python -m tokviz train ...``: see :mod:`tokviz.cli`."""

import sys

from tokviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
