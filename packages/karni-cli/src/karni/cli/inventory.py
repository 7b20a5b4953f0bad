"""The project inventory ``karni context`` prints, read statically.

The project's code is never imported or run: Python files are parsed with the
compiler's AST mode (the builtin ``_ast`` module, much cheaper to load than
``ast``) and front-end pages are listed from the file system. An agent runs
``karni context`` before every edit, so this stays fast and side-effect free.

Lines, each omitted when empty, in this order::

    APPS: label(path/) ...
    MODELS: Name(field,field,field,field) ... +N more
    VIEWSETS: Name ...
    PAGES: name ...
    MODULES: karni_x ...
    BASES: Name ...
"""

from __future__ import annotations

import _ast
import os

from karni.cli.inventory_cache import path_kind

__all__ = ["MAX_MODELS", "MAX_MODEL_FIELDS", "SETTINGS_FILE", "build", "inventory_lines", "render"]

SETTINGS_FILE = "config/settings.py"
"""Where ``INSTALLED_APPS`` and the ``# karni:apps`` marker are read from."""

APPS_MARKER = "# karni:apps"
"""Apps listed in ``INSTALLED_APPS`` before this comment are the project's own."""

PAGES_DIR = "frontend/src/pages"
"""Front-end pages: every file below it is one page."""

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

FIELD_CALLS = frozenset({"ForeignKey", "GenericForeignKey", "GenericRelation"})
"""Field constructors whose names do not end in ``Field``."""

NOT_MODELS = ("Manager", "QuerySet", "Choices", "Enum")
"""Classes from a ``models`` module with these name endings are not models."""

FRAMEWORK_MODULES = ("django", "rest_framework", "typing", "abc", "enum", "collections")
"""Bases from these packages are the framework's, not something to point an agent at."""

PAGE_SUFFIXES = frozenset({".tsx", ".ts", ".jsx", ".js", ".mjs", ".vue", ".svelte", ".mdx", ".md"})
"""File kinds that are pages; styles, images and the like under ``pages/`` are not."""

SKIPPED_DIRS = frozenset(
    {"migrations", "tests", "__pycache__", "templates", "static", "node_modules", "fixtures"}
)
"""App subfolders never searched for viewsets or admin classes."""

_ONLY_AST = _ast.PyCF_ONLY_AST

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


_facts: list[tuple[str, ...]] | None = None
"""While :func:`inventory_lines` runs: every file-system fact it relied on (for the cache)."""


def _note_kind(path: str) -> str:
    kind = path_kind(path)
    if _facts is not None:
        _facts.append(("k", path, kind))
    return kind


def _isdir(path: str) -> bool:
    return _note_kind(path) == "d"


def _isfile(path: str) -> bool:
    return _note_kind(path) == "f"


def _exists(path: str) -> bool:
    return _note_kind(path) != "x"


def _listdir(path: str) -> list[str]:
    if _facts is not None:
        try:
            _facts.append(("l", path, str(os.stat(path).st_mtime_ns)))
        except OSError:
            _facts.append(("k", path, "x"))
    return os.listdir(path)


def _walk(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk``, noting each folder it lists (its modification time changes with its entries)."""
    if _facts is not None and path_kind(top) != "d":
        _facts.append(("k", top, path_kind(top)))
    for current, dirs, files in os.walk(top):
        if _facts is not None:
            try:
                _facts.append(("l", current, str(os.stat(current).st_mtime_ns)))
            except OSError:
                _facts.append(("k", current, "x"))
        yield current, dirs, files


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            if _facts is not None:
                info = os.fstat(handle.fileno())
                _facts.append(("c", path, str(info.st_mtime_ns), str(info.st_size)))
            return handle.read()
    except OSError:
        if _facts is not None:
            _facts.append(("k", path, path_kind(path)))
        return None


def _parse(path: str, text: str | None = None) -> _ast.Module | None:
    """The module's AST, or None when it cannot be read or is not valid Python."""
    if text is None:
        text = _read(path)
        if text is None:
            return None
    try:
        module = compile(text, path, "exec", _ONLY_AST)
    except (SyntaxError, ValueError):
        return None
    assert isinstance(module, _ast.Module)  # mode "exec" always compiles to a Module
    return module


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


def _installed_apps(root: str) -> tuple[list[tuple[str, int]], int | None] | None:
    """``INSTALLED_APPS`` entries with their line numbers, and the marker's line.

    Returns None when the settings file or the setting is missing.
    """
    path = os.path.join(root, SETTINGS_FILE)
    text = _read(path)
    if text is None or "INSTALLED_APPS" not in text:
        return None
    module = _parse(path, text)
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


def _app_dir(root: str, entry: str) -> str | None:
    """The project folder an ``INSTALLED_APPS`` entry names, relative to ``root``."""
    parts = entry.split(".")
    if not all(parts):
        return None
    candidates = [parts]
    if len(parts) > 2 and parts[-2] == "apps":  # "pkg.apps.PkgConfig"
        candidates.append(parts[:-2])
    for candidate in candidates:
        relative = "/".join(candidate)
        if _isdir(os.path.join(root, relative)):
            return relative
    return None


def _looks_like_app(folder: str) -> bool:
    return any(_exists(os.path.join(folder, name)) for name in ("apps.py", "models.py", "models"))


def _scan_local_apps(root: str) -> list[str]:
    """Folders at the root or in ``apps/`` that look like Django apps, sorted."""
    found = []
    for parent in ("", "apps"):
        base = os.path.join(root, parent) if parent else root
        try:
            names = sorted(_listdir(base))
        except OSError:
            continue
        for name in names:
            if name.startswith((".", "_")) or name in ("node_modules", "frontend"):
                continue
            folder = os.path.join(base, name)
            if _isdir(folder) and _looks_like_app(folder):
                found.append(f"{parent}/{name}" if parent else name)
    return found


def _app_label(root: str, relative: str) -> str:
    """The app's label: an ``AppConfig.label`` set in ``apps.py``, else its folder name."""
    path = os.path.join(root, relative, "apps.py")
    text = _read(path)
    if text is not None and "label" in text:
        module = _parse(path, text)
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


class _Class:
    """A class found in the project, with what the inventory needs to know about it."""

    __slots__ = ("abstract", "app", "bases", "body", "kind", "name")

    def __init__(
        self, node: _ast.ClassDef, bases: list[tuple[str, str | None]], kind: str, app: int
    ) -> None:
        self.name = node.name
        self.body = node.body
        self.bases = bases
        self.kind = kind
        self.app = app
        self.abstract = _is_abstract(node)


def _is_abstract(node: _ast.ClassDef) -> bool:
    for item in node.body:
        if isinstance(item, _ast.ClassDef) and item.name == "Meta":
            for statement in item.body:
                if (
                    isinstance(statement, _ast.Assign)
                    and any(
                        isinstance(t, _ast.Name) and t.id == "abstract" for t in statement.targets
                    )
                    and isinstance(statement.value, _ast.Constant)
                    and statement.value.value is True
                ):
                    return True
    return False


def _imports(module: _ast.Module) -> dict[str, str]:
    """Local name → the dotted path it was imported as, for the module's top-level imports."""
    names: dict[str, str] = {}
    for statement in module.body:
        if isinstance(statement, _ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                names[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
        elif isinstance(statement, _ast.ImportFrom):  # relative import: the project's own
            for alias in statement.names:
                names[alias.asname or alias.name] = f".{statement.module or ''}.{alias.name}"
        elif isinstance(statement, _ast.Import):
            for alias in statement.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    names[top] = top
    return names


def _base(node: _ast.AST, imports: dict[str, str]) -> tuple[str, str | None] | None:
    """A base expression as (class name, dotted origin or None when unknown)."""
    if isinstance(node, _ast.Subscript):  # Generic[...] style bases
        node = node.value
    if isinstance(node, _ast.Name):
        return node.id, imports.get(node.id)
    if isinstance(node, _ast.Attribute):
        chain = [node.attr]
        value = node.value
        while isinstance(value, _ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if not isinstance(value, _ast.Name):
            return None
        head = imports.get(value.id, value.id)
        return node.attr, ".".join([head, *reversed(chain)])
    return None


class _Project:
    """Every class the inventory looks at, and the project's top-level package names."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.by_name: dict[str, _Class] = {}
        self.models: list[_Class] = []
        self.viewsets: list[_Class] = []
        self.others: list[_Class] = []
        self._local_tops: dict[str, bool] = {}

    def add_file(self, path: str, kind: str, app: int, text: str | None = None) -> None:
        module = _parse(path, text)
        if module is None:
            return
        imports = _imports(module)
        for statement in module.body:
            if not isinstance(statement, _ast.ClassDef):
                continue
            bases = [b for b in (_base(node, imports) for node in statement.bases) if b]
            found = _Class(statement, bases, kind, app)
            self.by_name.setdefault(found.name, found)
            {"models": self.models, "views": self.viewsets}.get(kind, self.others).append(found)

    def is_local_origin(self, origin: str | None) -> bool:
        if origin is None:
            return False
        if origin.startswith("."):
            return True
        top = origin.split(".", 1)[0]
        if top not in self._local_tops:
            self._local_tops[top] = _isdir(os.path.join(self.root, top)) or _isfile(
                os.path.join(self.root, top + ".py")
            )
        return self._local_tops[top]

    def local_class(self, name: str, origin: str | None) -> _Class | None:
        if origin is None or self.is_local_origin(origin):
            return self.by_name.get(name)
        return None

    def is_model(self, found: _Class, seen: frozenset[str] = frozenset()) -> bool:
        if found.name in seen:
            return False
        for name, origin in found.bases:
            local = self.local_class(name, origin)
            if local is not None and local is not found:
                if self.is_model(local, seen | {found.name}):
                    return True
                continue
            if origin is not None and origin.startswith("django.db.models."):
                if name == "Model":
                    return True
                continue
            if name.endswith(NOT_MODELS):
                continue
            if origin is not None and "models" in origin.split(".")[:-1]:
                return True
            if origin is None and name.endswith("Model"):
                return True
        return False

    def is_viewset(self, found: _Class, seen: frozenset[str] = frozenset()) -> bool:
        if found.name in seen or found.name.endswith("Mixin"):
            return False
        if found.name.endswith("ViewSet"):
            return True
        for name, origin in found.bases:
            if name.endswith("ViewSet"):
                return True
            local = self.local_class(name, origin)
            if (
                local is not None
                and local is not found
                and self.is_viewset(local, seen | {found.name})
            ):
                return True
        return False

    def fields(self, found: _Class, seen: frozenset[str] = frozenset()) -> list[str]:
        """Field names in Django's order: inherited from local abstract models first."""
        names: list[str] = []
        for base_name, origin in found.bases:
            local = self.local_class(base_name, origin)
            if local is not None and local.abstract and local.name not in seen:
                names += self.fields(local, seen | {found.name})
        for item in found.body:
            target = value = None
            if isinstance(item, _ast.Assign) and len(item.targets) == 1:
                target, value = item.targets[0], item.value
            elif isinstance(item, _ast.AnnAssign):
                target, value = item.target, item.value
            if isinstance(target, _ast.Name) and _is_field_call(value):
                names.append(target.id)
        return names

    def external_bases(self, found: _Class) -> list[str]:
        out = []
        for name, origin in found.bases:
            if name == "object" or self.local_class(name, origin) is not None:
                continue
            if self.is_local_origin(origin):
                continue
            if origin is not None and origin.split(".", 1)[0] in FRAMEWORK_MODULES:
                continue
            out.append(name)
        return out


def _is_field_call(value: _ast.AST | None) -> bool:
    if not isinstance(value, _ast.Call):
        return False
    function = value.func
    name = (
        function.id
        if isinstance(function, _ast.Name)
        else function.attr
        if isinstance(function, _ast.Attribute)
        else ""
    )
    return name.endswith("Field") or name in FIELD_CALLS


def _python_files(folder: str) -> list[str]:
    """The ``.py`` files below ``folder``, sorted, leaving out tests and migrations."""
    found = []
    for current, dirs, files in _walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py") and not name.startswith("test"):
                found.append(os.path.join(current, name))
    return found


def _scan_app(project: _Project, folder: str, app: int) -> None:
    models_file = os.path.join(folder, "models.py")
    models_package = os.path.join(folder, "models")
    for path in _python_files(folder):
        relative = path[len(folder) + 1 :]
        if path == models_file or path.startswith(models_package + os.sep):
            continue
        kind = "admin" if relative in ("admin.py",) or relative.startswith("admin" + os.sep) else ""
        text = _read(path)
        if text is None:
            continue
        if "ViewSet" in text:
            project.add_file(path, "views", app, text)
        elif kind:
            project.add_file(path, kind, app, text)


def _model_files(folder: str) -> list[str]:
    single = os.path.join(folder, "models.py")
    if _isfile(single):
        return [single]
    package = os.path.join(folder, "models")
    files = _python_files(package) if _isdir(package) else []
    init = os.path.join(package, "__init__.py")
    return sorted(files, key=lambda path: (path != init, path))


def _pages(root: str) -> list[str]:
    base = os.path.join(root, PAGES_DIR)
    found: set[str] = set()
    for current, dirs, files in _walk(base):
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


def inventory_lines(root: str) -> list[str]:
    """The inventory of the project at ``root``, one string per non-empty line."""
    settings = _installed_apps(root)
    app_dirs: list[str] = []
    modules: list[str] = []
    if settings is not None:
        entries, marker = settings
        for entry, line in entries:
            top = entry.split(".", 1)[0]
            if top.startswith("karni_") and top not in modules:
                modules.append(top)
            if marker is not None and line > marker:
                continue
            folder = _app_dir(root, entry)
            if folder is not None and folder not in app_dirs:
                app_dirs.append(folder)
    else:
        app_dirs = _scan_local_apps(root)

    project = _Project(root)
    for app, folder in enumerate(app_dirs):
        for path in _model_files(os.path.join(root, folder)):
            project.add_file(path, "models", app)
    for app, folder in enumerate(app_dirs):
        _scan_app(project, os.path.join(root, folder), app)

    lines = []
    if app_dirs:
        apps = " ".join(f"{_app_label(root, folder)}({folder}/)" for folder in app_dirs)
        lines.append(f"APPS: {apps}")

    models = [found for found in project.models if project.is_model(found)]
    concrete = [found for found in models if not found.abstract]
    if concrete:
        shown = []
        for found in concrete[:MAX_MODELS]:
            fields = []
            for name in project.fields(found):
                if name not in SKIPPED_FIELDS and name not in fields:
                    fields.append(name)
            shown.append(f"{found.name}({','.join(fields[:MAX_MODEL_FIELDS])})")
        if len(concrete) > MAX_MODELS:
            shown.append(f"+{len(concrete) - MAX_MODELS} more")
        lines.append(f"MODELS: {' '.join(shown)}")

    viewsets = [found for found in project.viewsets if project.is_viewset(found)]
    if viewsets:
        lines.append(f"VIEWSETS: {' '.join(found.name for found in viewsets)}")

    pages = _pages(root)
    if pages:
        lines.append(f"PAGES: {' '.join(pages)}")
    if modules:
        lines.append(f"MODULES: {' '.join(modules)}")

    bases: list[str] = []
    groups = (models, viewsets, project.others)
    for app in range(len(app_dirs)):  # per app: models, then viewsets, then admin classes
        for group in groups:
            for found in group:
                if found.app != app:
                    continue
                for name in project.external_bases(found):
                    if name not in bases:
                        bases.append(name)
    if bases:
        lines.append(f"BASES: {' '.join(bases)}")
    return lines


def build(root: str) -> tuple[str, list[tuple[str, ...]]]:
    """The rendered inventory and every file-system fact it was derived from."""
    from karni.agent.common.sanitize import clean_field

    global _facts
    facts: list[tuple[str, ...]] = []
    _facts = facts
    try:
        # App labels and file names come from the repository: one clean line each.
        lines = [clean_field(line) for line in inventory_lines(root)]
    finally:
        _facts = None
    facts.append(("c", __file__, *_stat_pair(__file__)))  # a new Karni may render differently
    return ("\n".join(lines) + "\n" if lines else ""), facts


def _stat_pair(path: str) -> tuple[str, str]:
    try:
        info = os.stat(path)
    except OSError:
        return "-", "-"
    return str(info.st_mtime_ns), str(info.st_size)


def render(root: str) -> str:
    """The inventory as ``karni context`` prints it: lines joined, newline-terminated.

    An empty project gives an empty string. The result is reused from the
    cache (see :mod:`karni.cli.inventory_cache`) while nothing it was derived
    from has changed.
    """
    from karni.cli.inventory_cache import cached

    return cached(root, build)
