"""``python -m karni.cli``: the same as the ``karni`` command.

``python -m`` puts the working folder first on ``sys.path``. That folder is
often a repository just cloned: a ``*.dist-info`` folder or a module there
would be found as an installed history provider and imported. The entry is
dropped before Karni imports anything else. Python has already imported the
``karni`` and ``karni.cli`` packages by then, from that folder if it holds
them, which only ``python -P`` prevents (see ``docs/security.md``).
"""

import os
import sys

if sys.path and not sys.flags.safe_path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

# Imported only once the working folder is off sys.path.
from karni.cli.main import console

console()
