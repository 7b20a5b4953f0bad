"""karni-cli's installed version, read without ``importlib.metadata``.

``karni --version`` should cost no more than starting Python, and importing
``importlib.metadata`` alone costs several times that (docs/performance.md).
An installed distribution's metadata folder is named ``NAME-VERSION.dist-info``
in a ``sys.path`` folder, so listing those folders is enough.
"""

from __future__ import annotations

import os
import sys

__all__ = ["cli_version"]

_PREFIX = "karni_cli-"
_SUFFIX = ".dist-info"


def cli_version(path: list[str] | None = None) -> str | None:
    """The version of the first karni-cli found on ``path`` (``sys.path``); None if none."""
    for entry in sys.path if path is None else path:
        try:
            names = os.listdir(entry or os.curdir)
        except OSError:
            continue
        for name in sorted(names):
            if name.lower().startswith(_PREFIX) and name.endswith(_SUFFIX):
                version = name[len(_PREFIX) : -len(_SUFFIX)]
                if version and os.path.isdir(os.path.join(entry or os.curdir, name)):
                    return version
    return None
