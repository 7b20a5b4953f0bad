"""`my-history show PATH`: every note about a file, uncapped."""

from __future__ import annotations

import sys
from pathlib import Path

from my_history.karni_provider import MyHistoryProvider


def main() -> int:
    """Print the brief for the file named on the command line."""
    if len(sys.argv) != 3 or sys.argv[1] != "show":
        print("usage: my-history show PATH", file=sys.stderr)
        return 2
    brief = MyHistoryProvider().context(Path.cwd(), sys.argv[2])
    print(brief or f"no notes about {sys.argv[2]}")
    return 0
