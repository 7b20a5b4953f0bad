"""The classes of the project's apps: which are models and viewsets, their fields and bases.

Each app's ``models.py`` (or ``models/`` package) is read first, then every
other module that mentions a viewset, and its admin modules. A class counts
as a model or a viewset through its bases, followed through the project's own
classes; nothing is imported.
"""

from __future__ import annotations

import _ast
import os

from karni.cli.inventory.facts import isdir, isfile, parse, read, walk

__all__ = ["ProjectClass", "ProjectClasses", "collect_classes"]

FIELD_CALLS = frozenset({"ForeignKey", "GenericForeignKey", "GenericRelation"})
"""Field constructors whose names do not end in ``Field``."""

NOT_MODELS = ("Manager", "QuerySet", "Choices", "Enum")
"""Classes from a ``models`` module with these name endings are not models."""

FRAMEWORK_MODULES = ("django", "rest_framework", "typing", "abc", "enum", "collections")
"""Bases from these packages are the framework's, not something to point an agent at."""

SKIPPED_DIRS = frozenset(
    {"migrations", "tests", "__pycache__", "templates", "static", "node_modules", "fixtures"}
)
"""App subfolders never searched for viewsets or admin classes."""


class ProjectClass:
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


class ProjectClasses:
    """Every class the inventory looks at, and the project's top-level package names."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.by_name: dict[str, ProjectClass] = {}
        self.models: list[ProjectClass] = []
        self.viewsets: list[ProjectClass] = []
        self.others: list[ProjectClass] = []
        self._local_tops: dict[str, bool] = {}

    def add_file(self, path: str, kind: str, app: int, text: str | None = None) -> None:
        """Read the classes defined at the top of the module at ``path``."""
        module = parse(path, text)
        if module is None:
            return
        imports = _imports(module)
        for statement in module.body:
            if not isinstance(statement, _ast.ClassDef):
                continue
            bases = [b for b in (_base(node, imports) for node in statement.bases) if b]
            found = ProjectClass(statement, bases, kind, app)
            self.by_name.setdefault(found.name, found)
            {"models": self.models, "views": self.viewsets}.get(kind, self.others).append(found)

    def is_local_origin(self, origin: str | None) -> bool:
        """Whether ``origin`` (a dotted import path) is the project's own code."""
        if origin is None:
            return False
        if origin.startswith("."):
            return True
        top = origin.split(".", 1)[0]
        if top not in self._local_tops:
            self._local_tops[top] = isdir(os.path.join(self.root, top)) or isfile(
                os.path.join(self.root, top + ".py")
            )
        return self._local_tops[top]

    def local_class(self, name: str, origin: str | None) -> ProjectClass | None:
        """The project's class ``name`` when ``origin`` points into the project, else None."""
        if origin is None or self.is_local_origin(origin):
            return self.by_name.get(name)
        return None

    def is_model(self, found: ProjectClass, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``found`` is a Django model, through its bases."""
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

    def is_viewset(self, found: ProjectClass, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``found`` is a viewset, by its name or its bases."""
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

    def fields(self, found: ProjectClass, seen: frozenset[str] = frozenset()) -> list[str]:
        """Field names: the class's own, in declaration order, then those it inherits.

        Inherited fields come from the project's abstract models and mixins,
        base by base in the order the class lists them. A model's own fields
        say what it is for; what it inherits (descriptions, comments, audit
        fields) is the same on many models, so it comes last.
        """
        names: list[str] = []
        for item in found.body:
            target = value = None
            if isinstance(item, _ast.Assign) and len(item.targets) == 1:
                target, value = item.targets[0], item.value
            elif isinstance(item, _ast.AnnAssign):
                target, value = item.target, item.value
            if isinstance(target, _ast.Name) and _is_field_call(value):
                names.append(target.id)
        for base_name, origin in found.bases:
            local = self.local_class(base_name, origin)
            if local is not None and local.abstract and local.name not in seen:
                names += self.fields(local, seen | {found.name})
        return names

    def external_bases(self, found: ProjectClass) -> list[str]:
        """The names of ``found``'s bases from outside the project and the framework."""
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


def _python_files(folder: str, apart: frozenset[str] = frozenset()) -> list[str]:
    """The ``.py`` files below ``folder``, sorted, leaving out tests, migrations and ``apart``.

    ``apart`` holds the folders of other apps nested in this one (``pkg`` and
    ``pkg.api`` both installed): each is read as its own app, once.
    """
    found = []
    for current, dirs, files in walk(folder):
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_DIRS
            and not d.startswith(".")
            and os.path.join(current, d) not in apart
        )
        for name in sorted(files):
            if name.endswith(".py") and not name.startswith("test"):
                found.append(os.path.join(current, name))
    return found


def _scan_app(project: ProjectClasses, folder: str, app: int, apart: frozenset[str]) -> None:
    models_file = os.path.join(folder, "models.py")
    models_package = os.path.join(folder, "models")
    for path in _python_files(folder, apart):
        relative = path[len(folder) + 1 :]
        if path == models_file or path.startswith(models_package + os.sep):
            continue
        kind = "admin" if relative in ("admin.py",) or relative.startswith("admin" + os.sep) else ""
        text = read(path)
        if text is None:
            continue
        if "ViewSet" in text:
            project.add_file(path, "views", app, text)
        elif kind:
            project.add_file(path, kind, app, text)


def _model_files(folder: str) -> list[str]:
    single = os.path.join(folder, "models.py")
    if isfile(single):
        return [single]
    package = os.path.join(folder, "models")
    files = _python_files(package) if isdir(package) else []
    init = os.path.join(package, "__init__.py")
    return sorted(files, key=lambda path: (path != init, path))


def collect_classes(root: str, app_dirs: list[str]) -> ProjectClasses:
    """Every class the inventory looks at, in app order: each app's models first."""
    project = ProjectClasses(root)
    for app, folder in enumerate(app_dirs):
        for path in _model_files(os.path.join(root, folder)):
            project.add_file(path, "models", app)
    folders = [os.path.join(root, *folder.split("/")) for folder in app_dirs]
    for app, folder in enumerate(folders):
        nested = frozenset(other for other in folders if other.startswith(folder + os.sep))
        _scan_app(project, folder, app, nested)
    return project
