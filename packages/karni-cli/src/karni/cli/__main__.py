"""``python -m karni.cli``: the same as the ``karni`` command."""

import sys

from karni.cli.main import main

sys.exit(main())
