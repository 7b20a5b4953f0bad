"""The front-end pages: every page file below ``frontend/src/pages/``, without its suffix."""

from __future__ import annotations

import os

from karni.cli.inventory.facts import walk

__all__ = ["PAGES_DIR", "PAGE_SUFFIXES", "pages"]

PAGES_DIR = "frontend/src/pages"
"""Front-end pages: every file below it is one page."""

PAGE_SUFFIXES = frozenset({".tsx", ".ts", ".jsx", ".js", ".mjs", ".vue", ".svelte", ".mdx", ".md"})
"""File kinds that are pages; styles, images and the like under ``pages/`` are not."""


def pages(root: str) -> list[str]:
    """The page names below ``frontend/src/pages/``, sorted."""
    base = os.path.join(root, PAGES_DIR)
    found: set[str] = set()
    for current, dirs, files in walk(base):
        dirs[:] = [d for d in dirs if d not in ("__tests__", "tests", "node_modules")]
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            stem, suffix = os.path.splitext(name)
            if suffix not in PAGE_SUFFIXES or name.startswith(".") or stem.endswith(".d"):
                continue
            if stem.endswith((".test", ".spec", ".stories")):
                continue
            relative = os.path.relpath(os.path.join(current, stem), base)
            found.add(relative.replace(os.sep, "/"))
    return sorted(found)
