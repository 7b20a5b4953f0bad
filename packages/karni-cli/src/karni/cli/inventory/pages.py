"""The front-end pages: every page file below the project's pages folder, without its suffix.

The pages folder is ``frontend/src/pages/`` in Karni's layout. Elsewhere it
is found beside a React front end: the nearest ``package.json`` (or
``frontend/package.json``) that names ``react``, in the project folder or up
to :data:`MAX_LEVELS_UP` folders above it (no higher than the repository's
top, the folder holding ``.git``, and only in folders the user owns); below
that package, the shallowest folder named ``pages`` that holds a page file
(``frontend/js/pages/``, ``src/pages/``, ``pages/``, …), at most
:data:`MAX_DEPTH` folders down. Package files are searched for the word,
never parsed or run.
"""

from __future__ import annotations

import os

from karni.agent.common.ownership import find_upwards
from karni.cli.inventory.facts import exists, isdir, listdir, read, walk

__all__ = ["MAX_DEPTH", "MAX_LEVELS_UP", "PAGES_DIR", "PAGE_SUFFIXES", "pages"]

PAGES_DIR = "frontend/src/pages"
"""Front-end pages in Karni's layout: every file below it is one page."""

PAGE_SUFFIXES = frozenset({".tsx", ".ts", ".jsx", ".js", ".mjs", ".vue", ".svelte", ".mdx", ".md"})
"""File kinds that are pages; styles, images and the like under ``pages/`` are not."""

MAX_LEVELS_UP = 2
"""How many folders above the project a React ``package.json`` is looked for."""

MAX_DEPTH = 4
"""How deep below the React package a ``pages`` folder is looked for."""

_PACKAGE_FILES = ("package.json", "frontend/package.json")
_SCRIPT_SUFFIXES = frozenset({".tsx", ".ts", ".jsx", ".js", ".mjs"})
_NOT_SOURCES = frozenset(
    {
        "node_modules",
        "dist",
        "build",
        "coverage",
        "public",
        "static",
        "staticfiles",
        "media",
        "templates",
        "migrations",
        "venv",
        "vendor",
        "__tests__",
        "tests",
    }
)
"""Folders never searched for pages."""


def _page_names(base: str) -> list[str]:
    """The page names below ``base``, sorted: tests, stories and type declarations left out."""
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


def _names_react(path: str) -> bool:
    text = read(path)
    return text is not None and '"react"' in text


def react_package(root: str) -> str | None:
    """The folder of the nearest ``package.json`` naming React, at or a little above ``root``."""
    seen: dict[str, str] = {}
    stop = [False]

    def marker_in(folder: str) -> str | None:
        if stop[0] or len(seen) > MAX_LEVELS_UP:
            return None
        seen[folder] = ""
        stop[0] = exists(os.path.join(folder, ".git"))  # the repository's top: go no higher
        for name in _PACKAGE_FILES:
            if _names_react(os.path.join(folder, *name.split("/"))):
                seen[folder] = name
                return name
        return None

    found = find_upwards(root, marker_in)
    if found is None:
        return None
    return os.path.dirname(os.path.join(found, *seen[found].split("/")))


def _holds_a_page(folder: str) -> bool:
    try:
        names = listdir(folder)
    except OSError:
        return False
    return any(os.path.splitext(name)[1] in _SCRIPT_SUFFIXES for name in names) or any(
        isdir(os.path.join(folder, name)) for name in names if "." not in name
    )


def _pages_folder(package: str, root: str) -> str | None:
    """The shallowest ``pages`` folder with a page below ``package`` (the Django tree skipped)."""
    level = [package]
    for _ in range(MAX_DEPTH):
        below = []
        for folder in level:
            try:
                names = sorted(listdir(folder))
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if name[:1] in "._" or "." in name or name in _NOT_SOURCES or path == root:
                    continue
                if not isdir(path):
                    continue
                if name == "pages" and _holds_a_page(path):
                    return path
                below.append(path)
        level = below
    return None


def pages(root: str) -> tuple[list[str], str | None]:
    """The page names, sorted, and where they are when that is not ``frontend/src/pages/``.

    Returns:
        ``(names, folder)``: ``folder`` is None for Karni's layout, else the
        pages folder relative to ``root`` (``../frontend/js/pages/``).
    """
    base = os.path.join(root, *PAGES_DIR.split("/"))
    if isdir(base):
        return _page_names(base), None
    package = react_package(root)
    if package is None:
        return [], None
    folder = _pages_folder(package, root if package != root else "")
    if folder is None:
        return [], None
    relative = os.path.relpath(folder, root).replace(os.sep, "/")
    return _page_names(folder), relative + "/"
