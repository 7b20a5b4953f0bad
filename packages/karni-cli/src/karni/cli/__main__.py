"""``python -m karni.cli``: the same as the ``karni`` command."""

from karni.cli.main import console

console()
