"""Printing a command's help wrapped to the terminal (79 columns when not a terminal).

Imported only when help is asked for or a usage error is printed, never on
the hot path of ``karni context``.
"""

from __future__ import annotations

import sys

from karni.agent.common.terminal import fit, help_width

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["write_help"]


def write_help(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` to ``stream`` (default stdout), each line fitted to its width."""
    target = sys.stdout if stream is None else stream
    target.write(fit(text, help_width(target)))
