"""Which folders are the project's Django apps, and what each is called.

``INSTALLED_APPS``, as the settings ``manage.py`` names build it
(:mod:`karni.cli.inventory.settings`), decides: its entries that are folders
of the project, dotted (``pkg.api``) or as ``AppConfig`` paths
(``pkg.alerts.apps.AlertsConfig``, followed to the class's ``name``), and in
a settings file with the ``# karni:apps`` marker only the entries before it.
Without settings that name a folder here, folders at the top or in
``apps/`` that look like apps count. When nothing is found, the APPS line
says what was looked for.
"""

from __future__ import annotations

import _ast
import os

from karni.cli.inventory.facts import exists, isdir, listdir, parse, read
from karni.cli.inventory.settings import (
    APPS_MARKER,
    SETTINGS_FILE,
    InstalledApps,
    module_file,
    read_installed_apps,
)

__all__ = [
    "APPS_MARKER",
    "NO_APPS",
    "SETTINGS_FILE",
    "app_dir",
    "app_label",
    "project_apps",
    "scan_local_apps",
]

NO_APPS = (
    "none yet (no Django app of the project found; add one with `python manage.py startapp NAME`)"
)
"""The APPS line of a project whose settings list only Django's and Karni's own apps, or none."""

_LOOKED_FOR = "and no folder at the top or in apps/ has apps.py, models.py or models/"


def _class_setting(path: str, class_name: str, setting: str) -> str | None:
    """The string ``setting = "…"`` in class ``class_name`` of the module at ``path``, if set."""
    text = read(path)
    if text is None or setting not in text:
        return None
    module = parse(path, text)
    for statement in module.body if module is not None else ():
        if not isinstance(statement, _ast.ClassDef) or class_name not in ("", statement.name):
            continue
        for item in statement.body:
            if (
                isinstance(item, _ast.Assign)
                and any(isinstance(t, _ast.Name) and t.id == setting for t in item.targets)
                and isinstance(item.value, _ast.Constant)
                and isinstance(item.value.value, str)
            ):
                return item.value.value
    return None


def app_dir(root: str, entry: str) -> str | None:
    """The project folder an ``INSTALLED_APPS`` entry names, relative to ``root``."""
    parts = entry.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    candidates = [parts]
    if len(parts) > 2 and parts[-1][:1].isupper():  # an AppConfig: "pkg.apps.PkgConfig"
        config = module_file(root, parts[:-1])
        name = _class_setting(config, parts[-1], "name") if config is not None else None
        candidates = [name.split(".")] if name else []
        candidates.append(parts[:-2])
    for candidate in candidates:
        relative = "/".join(candidate)
        if candidate and isdir(os.path.join(root, relative)):
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
    label = _class_setting(os.path.join(root, relative, "apps.py"), "", "label")
    return label if label is not None else relative.rsplit("/", 1)[-1]


def _listed_apps(root: str, apps: InstalledApps) -> tuple[list[str], list[str]]:
    """The app folders ``INSTALLED_APPS`` names (before any marker), and its ``karni_*`` modules."""
    app_dirs: list[str] = []
    modules: list[str] = []
    for entry, path, line in apps.entries:
        top = entry.split(".", 1)[0]
        if top.startswith("karni_") and top not in modules:
            modules.append(top)
        if apps.marker is not None and path == apps.marker[0] and line > apps.marker[1]:
            continue
        folder = app_dir(root, entry)
        if folder is not None and folder not in app_dirs:
            app_dirs.append(folder)
    return app_dirs, modules


def _names_the_project(root: str, apps: InstalledApps) -> bool:
    """Whether an entry starts with a package of the project (an app Karni failed to find)."""
    for entry, _, _ in apps.entries:
        top = os.path.join(root, entry.split(".", 1)[0])
        if isdir(top) or exists(top + ".py"):
            return True
    return False


def _nothing_found(module: str | None, tried: list[str]) -> str:
    """The APPS line when no settings set ``INSTALLED_APPS``: what was looked for."""
    if tried:
        return f"none found ({' and '.join(tried[:2])} set no INSTALLED_APPS, {_LOOKED_FOR})"
    if module is not None:
        path = module.replace(".", "/")
        return (
            f"none found (manage.py names the settings module {module}, but there is no "
            f"{path}.py or {path}/__init__.py here, {_LOOKED_FOR})"
        )
    return NO_APPS


def project_apps(root: str) -> tuple[list[str], list[str], str | None]:
    """The project's app folders, its installed ``karni_*`` modules, and the note when none.

    Returns:
        ``(app_dirs, modules, note)``: folders relative to ``root``; the
        ``karni_*`` entries of ``INSTALLED_APPS``; and, only when no app was
        found, what the APPS line says instead (what was looked for).
    """
    apps, module, tried = read_installed_apps(root)
    app_dirs, modules = _listed_apps(root, apps) if apps is not None else ([], [])
    if not app_dirs:
        app_dirs = scan_local_apps(root)
    if app_dirs:
        return app_dirs, modules, None
    if apps is None:
        return [], modules, _nothing_found(module, tried)
    if not _names_the_project(root, apps):  # only others' apps: the project has none yet
        return [], modules, NO_APPS
    return (
        [],
        modules,
        (
            f"none found (no entry of INSTALLED_APPS in {apps.source} is a folder of this "
            f"project, {_LOOKED_FOR})"
        ),
    )
