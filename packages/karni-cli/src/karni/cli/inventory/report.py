"""The project inventory ``karni context`` prints, read statically.

The project's code is never imported or run: Python files are parsed with the
compiler's AST mode (the builtin ``_ast`` module, much cheaper to load than
``ast``) and front-end pages are listed from the file system. An agent runs
``karni context`` before every edit, so this stays fast and side-effect free.

Lines, each omitted when empty, in this order; APPS says what was looked for
when no app is found (:data:`EMPTY_INVENTORY` when there is nothing at all)::

    APPS: label(path/) ...
    MODELS: Name(field,field,field,field) ... +N more
    VIEWSETS: Name ... +N more
    PAGES: name ... (folder/, when not frontend/src/pages/)
    MODULES: karni_x ...
    BASES: Name ...

The whole inventory stays within :data:`INVENTORY_TOKEN_BUDGET` tokens
(characters ÷ 4, as the history cap counts them), on a project of any size:
each line is cut at its share of the budget (:data:`LINE_CAPS`), between two
names, and ends with ``+N more``.
"""

from __future__ import annotations

import os

__all__ = [
    "EMPTY_INVENTORY",
    "INVENTORY_CHAR_BUDGET",
    "INVENTORY_TOKEN_BUDGET",
    "LINE_CAPS",
    "MAX_MODELS",
    "MAX_MODEL_FIELDS",
    "SETTINGS_FILE",
    "build",
    "inventory_lines",
    "render",
]

from karni.agent.common.sanitize import clean_field
from karni.cli.inventory.apps import NO_APPS, SETTINGS_FILE, app_label, project_apps
from karni.cli.inventory.cache import cached
from karni.cli.inventory.classes import collect_classes
from karni.cli.inventory.facts import recorded
from karni.cli.inventory.pages import pages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.cli.inventory.classes import ProjectClass, ProjectClasses

EMPTY_INVENTORY = f"APPS: {NO_APPS}"
"""The inventory of a project with nothing to list, in the inventory's own format."""

MAX_MODELS = 40
"""Models shown at most before the rest are summed up as ``+N more``."""

MAX_MODEL_FIELDS = 4
"""Fields shown per model: its own first, in declaration order, then inherited ones."""

INVENTORY_TOKEN_BUDGET = 500
"""The whole inventory's budget, in tokens estimated as characters ÷ 4."""

INVENTORY_CHAR_BUDGET = INVENTORY_TOKEN_BUDGET * 4
"""The same budget in characters, newlines included."""

LINE_CAPS = {
    "APPS": 320,
    "MODELS": 870,
    "VIEWSETS": 240,
    "PAGES": 240,
    "MODULES": 120,
    "BASES": 200,
}
"""Each line's share of the budget in characters, its label included; with their newlines
they add up to no more than :data:`INVENTORY_CHAR_BUDGET`."""

SKIPPED_FIELDS = frozenset(
    {
        # identity
        "id",
        "pk",
        # timestamps and soft-delete bookkeeping
        "created",
        "created_at",
        "created_on",
        "date_created",
        "updated",
        "updated_at",
        "updated_on",
        "date_updated",
        "modified",
        "modified_at",
        "modified_on",
        "date_modified",
        "last_updated",
        "last_modified",
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
    app_dirs, modules, note = project_apps(root)
    project = collect_classes(root, app_dirs)
    models = [found for found in project.models if project.is_model(found)]
    viewsets = [found for found in project.viewsets if project.is_viewset(found)]
    page_names, pages_folder = pages(root)
    groups = (models, viewsets, project.others)
    lines = [
        _note("APPS", note) if note else _capped("APPS", _apps(root, app_dirs)),
        _capped("MODELS", _models(project, models), limit=MAX_MODELS),
        _capped("VIEWSETS", [found.name for found in viewsets]),
        _capped("PAGES", [clean_field(name) for name in page_names], _where(pages_folder)),
        _capped("MODULES", modules),
        _capped("BASES", _bases(project, len(app_dirs), groups)),
    ]
    return [line for line in lines if line] or [EMPTY_INVENTORY]


def _apps(root: str, app_dirs: list[str]) -> list[str]:
    return [clean_field(f"{app_label(root, folder)}({folder}/)") for folder in app_dirs]


def _where(folder: str | None) -> str:
    return f"({clean_field(folder)})" if folder else ""


def _note(label: str, text: str) -> str:
    """``LABEL: text``, cut to the line's cap with ``…``."""
    line = f"{label}: {clean_field(text)}"
    cap = LINE_CAPS[label]
    return line if len(line) <= cap else line[: cap - 1] + "…"


def _capped(label: str, items: list[str], tail: str = "", limit: int | None = None) -> str:
    """``LABEL: a b c`` within the line's cap: cut between names, ending ``+N more``.

    Args:
        label: The line's label (a key of :data:`LINE_CAPS`).
        items: The names, in order.
        tail: Text that ends the line whatever is cut (the pages' folder).
        limit: Show at most this many names.
    """
    if not items:
        return ""
    cap = LINE_CAPS[label]
    suffix = f" {tail}" if tail else ""

    def line(count: int) -> str:
        more = f" +{len(items) - count} more" if count < len(items) else ""
        return f"{label}:{''.join(' ' + item for item in items[:count])}{more}{suffix}"

    count, length = 0, len(label) + 1 + len(suffix)
    for item in items[: limit if limit is not None else len(items)]:
        if length + 1 + len(item) > cap:
            break
        count, length = count + 1, length + 1 + len(item)
    while count and len(line(count)) > cap:
        count -= 1
    return line(count)


def _models(project: ProjectClasses, models: list[ProjectClass]) -> list[str]:
    """``Name(field,...)`` for each concrete model; ``Name`` alone when it has no field to show."""
    shown = []
    for found in models:
        if found.abstract:
            continue
        fields: list[str] = []
        for name in project.fields(found):
            if name not in SKIPPED_FIELDS and name not in fields:
                fields.append(name)
        listed = ",".join(fields[:MAX_MODEL_FIELDS])
        shown.append(f"{found.name}({listed})" if listed else found.name)
    return shown


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
    names = ("apps.py", "classes.py", "facts.py", "pages.py", "report.py", "settings.py")
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
