"""``scripts/check-ranges``: fail when a sibling range does not admit the in-repo version."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from release_tools.ranges import range_problems
from release_tools.versions import VersionError
from release_tools.workspace import WorkspaceError, load_workspace


def main(argv: list[str]) -> int:
    if argv:
        print("usage: scripts/check-ranges  (no arguments)", file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parents[2]
    try:
        packages = load_workspace(root)
        problems = range_problems(packages)
    except (WorkspaceError, VersionError) as error:
        print(f"check-ranges: {error}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"check-ranges: {problem}", file=sys.stderr)
    if problems:
        return 1
    edges = sum(1 for p in packages.values() for d, _ in p.dependencies if d in packages)
    print(f"check-ranges: ok ({len(packages)} packages, {edges} sibling ranges)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
