"""The project inventory ``karni context`` prints, read statically.

The project's code is never imported or run: Python files are parsed with the
compiler's AST mode (the builtin ``_ast`` module, much cheaper to load than
``ast``) and front-end pages are listed from the file system. An agent runs
``karni context`` before every edit, so this stays fast and side-effect free.

Lines, each omitted when empty, in this order (a project with nothing to
list gets the one line :data:`EMPTY_INVENTORY` instead: never silence)::

    APPS: label(path/) ...
    MODELS: Name(field,field,field,field) ... +N more
    VIEWSETS: Name ...
    PAGES: name ...
    MODULES: karni_x ...
    BASES: Name ...
"""

from __future__ import annotations

import os

__all__ = [
    "EMPTY_INVENTORY",
    "MAX_MODELS",
    "MAX_MODEL_FIELDS",
    "SETTINGS_FILE",
    "build",
    "inventory_lines",
    "render",
]

from karni.agent.common.sanitize import clean_field
from karni.cli.inventory.apps import SETTINGS_FILE, app_label, project_apps
from karni.cli.inventory.cache import cached
from karni.cli.inventory.classes import collect_classes
from karni.cli.inventory.facts import recorded
from karni.cli.inventory.pages import pages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.cli.inventory.classes import ProjectClass, ProjectClasses

EMPTY_INVENTORY = (
    "APPS: none yet (no Django app of the project found; "
    "add one with `python manage.py startapp NAME`)"
)
"""The inventory of a project with nothing to list, in the inventory's own format."""

MAX_MODELS = 40
"""Models shown before the rest are summed up as ``+N more``."""

MAX_MODEL_FIELDS = 4
"""Fields shown per model, in declaration order."""

SKIPPED_FIELDS = frozenset(
    {
        # identity
        "id",
        "pk",
        # timestamps and soft-delete bookkeeping
        "created",
        "created_at",
        "created_on",
        "updated",
        "updated_at",
        "updated_on",
        "modified",
        "modified_at",
        "modified_on",
        "deleted_at",
        "deleted_on",
        "is_deleted",
        # audit
        "created_by",
        "updated_by",
        "modified_by",
        "deleted_by",
        # auth bookkeeping
        "password",
        "last_login",
        "is_superuser",
        "is_staff",
        "is_active",
        "date_joined",
        "groups",
        "user_permissions",
    }
)
"""Fields that say nothing about what a model is for."""


def inventory_lines(root: str) -> list[str]:
    """The inventory of the project at ``root``, one string per non-empty line."""
    app_dirs, modules = project_apps(root)
    project = collect_classes(root, app_dirs)
    models = [found for found in project.models if project.is_model(found)]
    viewsets = [found for found in project.viewsets if project.is_viewset(found)]
    apps = " ".join(f"{app_label(root, folder)}({folder}/)" for folder in app_dirs)
    lines = [
        ("APPS", apps),
        ("MODELS", _models(project, models)),
        ("VIEWSETS", " ".join(found.name for found in viewsets)),
        ("PAGES", " ".join(pages(root))),
        ("MODULES", " ".join(modules)),
        ("BASES", " ".join(_bases(project, len(app_dirs), (models, viewsets, project.others)))),
    ]
    return [f"{label}: {text}" for label, text in lines if text] or [EMPTY_INVENTORY]


def _models(project: ProjectClasses, models: list[ProjectClass]) -> str:
    """``Name(field,...)`` for each concrete model, then ``+N more`` past :data:`MAX_MODELS`."""
    concrete = [found for found in models if not found.abstract]
    shown = []
    for found in concrete[:MAX_MODELS]:
        fields: list[str] = []
        for name in project.fields(found):
            if name not in SKIPPED_FIELDS and name not in fields:
                fields.append(name)
        shown.append(f"{found.name}({','.join(fields[:MAX_MODEL_FIELDS])})")
    if len(concrete) > MAX_MODELS:
        shown.append(f"+{len(concrete) - MAX_MODELS} more")
    return " ".join(shown)


def _bases(
    project: ProjectClasses, app_count: int, groups: tuple[list[ProjectClass], ...]
) -> list[str]:
    """The outside bases to reuse: per app, those of its models, then viewsets, then admin."""
    bases: list[str] = []
    for app in range(app_count):
        for group in groups:
            for found in group:
                if found.app != app:
                    continue
                for name in project.external_bases(found):
                    if name not in bases:
                        bases.append(name)
    return bases


def _renderer_files() -> list[str]:
    """The source files that decide what the inventory looks like."""
    folder = os.path.dirname(__file__)
    names = ("apps.py", "classes.py", "facts.py", "pages.py", "report.py")
    return [os.path.join(folder, name) for name in names]


def build(root: str) -> tuple[str, list[tuple[str, ...]]]:
    """The rendered inventory and every file-system fact it was derived from."""
    lines, facts = recorded(lambda: inventory_lines(root))
    # App labels and file names come from the repository: one clean line each.
    lines = [clean_field(line) for line in lines]
    for path in _renderer_files():  # a new Karni may render differently
        facts.append(("c", path, *_stat_pair(path)))
    return ("\n".join(lines) + "\n" if lines else ""), facts


def _stat_pair(path: str) -> tuple[str, str]:
    try:
        info = os.stat(path)
    except OSError:
        return "-", "-"
    return str(info.st_mtime_ns), str(info.st_size)


def render(root: str) -> str:
    """The inventory as ``karni context`` prints it: lines joined, newline-terminated.

    A project with nothing to list gives :data:`EMPTY_INVENTORY`. The result is reused from the
    cache (see :mod:`karni.cli.inventory.cache`) while nothing it was derived
    from has changed.
    """
    return cached(root, build)
