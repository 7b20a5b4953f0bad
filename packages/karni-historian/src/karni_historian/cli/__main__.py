"""``python -m karni_historian.cli``: the ``karni-historian`` command."""

import sys

from karni_historian.cli import main

sys.exit(main())
