"""Which folders are the project's Django apps, and what each is called.

``INSTALLED_APPS`` in ``config/settings.py`` decides: the entries before the
``# karni:apps`` marker that are folders of the project. Without that file or
setting, folders at the root or in ``apps/`` that look like apps count.
"""

from __future__ import annotations

import _ast
import os

from karni.cli.inventory.facts import exists, isdir, listdir, parse, read

__all__ = [
    "APPS_MARKER",
    "SETTINGS_FILE",
    "app_dir",
    "app_label",
    "project_apps",
    "scan_local_apps",
]

SETTINGS_FILE = "config/settings.py"
"""Where ``INSTALLED_APPS`` and the ``# karni:apps`` marker are read from."""

APPS_MARKER = "# karni:apps"
"""Apps listed in ``INSTALLED_APPS`` before this comment are the project's own."""


def _constant_strings(
    node: _ast.AST, names: dict[str, _ast.AST], depth: int = 0
) -> list[tuple[str, int]]:
    """String literals (with their line numbers) in a list/tuple expression.

    Names of other lists are followed, a few levels deep.
    """
    found: list[tuple[str, int]] = []
    if depth > 3:
        return found
    if isinstance(node, (_ast.List, _ast.Tuple, _ast.Set)):
        for element in node.elts:
            if isinstance(element, _ast.Constant) and isinstance(element.value, str):
                found.append((element.value, element.lineno))
            elif isinstance(element, _ast.Starred):
                found += _constant_strings(element.value, names, depth + 1)
    elif isinstance(node, _ast.BinOp):
        found += _constant_strings(node.left, names, depth + 1)
        found += _constant_strings(node.right, names, depth + 1)
    elif isinstance(node, _ast.Name) and node.id in names:
        found += _constant_strings(names[node.id], names, depth + 1)
    elif isinstance(node, _ast.Call):  # list(...), tuple(...)
        for argument in node.args:
            found += _constant_strings(argument, names, depth + 1)
    return found


def installed_apps(root: str) -> tuple[list[tuple[str, int]], int | None] | None:
    """``INSTALLED_APPS`` entries with their line numbers, and the marker's line.

    Returns None when the settings file or the setting is missing.
    """
    path = os.path.join(root, SETTINGS_FILE)
    text = read(path)
    if text is None or "INSTALLED_APPS" not in text:
        return None
    module = parse(path, text)
    if module is None:
        return None
    names: dict[str, _ast.AST] = {}
    values: list[_ast.AST] = []
    start = 0
    for statement in module.body:
        target = value = None
        if isinstance(statement, _ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, (_ast.AnnAssign, _ast.AugAssign)):
            target, value = statement.target, statement.value
        if not isinstance(target, _ast.Name) or value is None:
            continue
        if target.id == "INSTALLED_APPS":
            if not isinstance(statement, _ast.AugAssign):
                values = []
                start = statement.lineno
            values.append(value)
        else:
            names[target.id] = value
    if not values:
        return None
    entries = [entry for value in values for entry in _constant_strings(value, names)]
    marker = None
    for number, line in enumerate(text.splitlines(), 1):
        if number >= start and line.strip().startswith(APPS_MARKER):
            marker = number  # the first marker at or after the (last) INSTALLED_APPS assignment
            break
    return entries, marker


def app_dir(root: str, entry: str) -> str | None:
    """The project folder an ``INSTALLED_APPS`` entry names, relative to ``root``."""
    parts = entry.split(".")
    if not all(parts):
        return None
    candidates = [parts]
    if len(parts) > 2 and parts[-2] == "apps":  # "pkg.apps.PkgConfig"
        candidates.append(parts[:-2])
    for candidate in candidates:
        relative = "/".join(candidate)
        if isdir(os.path.join(root, relative)):
            return relative
    return None


def _looks_like_app(folder: str) -> bool:
    return any(exists(os.path.join(folder, name)) for name in ("apps.py", "models.py", "models"))


def scan_local_apps(root: str) -> list[str]:
    """Folders at the root or in ``apps/`` that look like Django apps, sorted."""
    found = []
    for parent in ("", "apps"):
        base = os.path.join(root, parent) if parent else root
        try:
            names = sorted(listdir(base))
        except OSError:
            continue
        for name in names:
            if name.startswith((".", "_")) or name in ("node_modules", "frontend"):
                continue
            folder = os.path.join(base, name)
            if isdir(folder) and _looks_like_app(folder):
                found.append(f"{parent}/{name}" if parent else name)
    return found


def app_label(root: str, relative: str) -> str:
    """The app's label: an ``AppConfig.label`` set in ``apps.py``, else its folder name."""
    path = os.path.join(root, relative, "apps.py")
    text = read(path)
    if text is not None and "label" in text:
        module = parse(path, text)
        for statement in module.body if module is not None else ():
            if not isinstance(statement, _ast.ClassDef):
                continue
            for item in statement.body:
                if (
                    isinstance(item, _ast.Assign)
                    and any(isinstance(t, _ast.Name) and t.id == "label" for t in item.targets)
                    and isinstance(item.value, _ast.Constant)
                    and isinstance(item.value.value, str)
                ):
                    return item.value.value
    return relative.rsplit("/", 1)[-1]


def project_apps(root: str) -> tuple[list[str], list[str]]:
    """The project's app folders (relative to ``root``) and its installed ``karni_*`` modules."""
    settings = installed_apps(root)
    if settings is None:
        return scan_local_apps(root), []
    app_dirs: list[str] = []
    modules: list[str] = []
    entries, marker = settings
    for entry, line in entries:
        top = entry.split(".", 1)[0]
        if top.startswith("karni_") and top not in modules:
            modules.append(top)
        if marker is not None and line > marker:
            continue
        folder = app_dir(root, entry)
        if folder is not None and folder not in app_dirs:
            app_dirs.append(folder)
    return app_dirs, modules
