"""``INSTALLED_APPS`` as the project's settings build it, read without running them.

Which settings: the module ``manage.py`` names (``os.environ.setdefault(
"DJANGO_SETTINGS_MODULE", "pkg.settings")``); else ``config/settings.py``
(Karni's layout); else the first ``<folder>/settings.py`` or
``<folder>/settings/__init__.py`` at the project's top that mentions
``INSTALLED_APPS``. A settings package whose ``__init__`` builds nothing is
read through its modules (``base``, ``common``, ``defaults`` first).

How: the module's top-level statements are followed in order, as Python
would run them, keeping only lists of strings: assignments, ``+=``,
``.append``/``.extend``/``.insert``, lists built from other lists (``A + B``,
``[*A, "x"]``, ``list(A)``), ``from .base import *`` and named imports of the
project's own modules, django-split-settings' ``include("components/*.py")``,
and both branches of every ``if`` and ``try``. Nothing is imported or run;
anything else (a function call, a comprehension) contributes nothing.
"""

from __future__ import annotations

import _ast
import os

from karni.cli.inventory.facts import isdir, isfile, listdir, parse, read

__all__ = [
    "APPS_MARKER",
    "SETTINGS_FILE",
    "SETTINGS_VARIABLE",
    "Entry",
    "InstalledApps",
    "named_settings_module",
    "read_installed_apps",
]

SETTINGS_FILE = "config/settings.py"
"""Karni's layout keeps the settings here; read when ``manage.py`` names no other module."""

SETTINGS_VARIABLE = "DJANGO_SETTINGS_MODULE"
"""The environment variable ``manage.py`` sets to the settings module's dotted name."""

APPS_MARKER = "# karni:apps"
"""Apps listed in ``INSTALLED_APPS`` before this comment are the project's own."""

MAX_FILES = 24
"""Settings files read at most for one project (imports and includes followed)."""

_PACKAGE_FIRST = ("base", "common", "defaults", "settings")
"""In a settings package that builds nothing itself, the modules read first."""

_SKIPPED_TOP = frozenset({"node_modules", "venv", "env", "static", "media", "templates"})

Entry = tuple[str, str, int]
"""One string of a list: its value, the file it is written in, and its line."""

_Names = dict[str, list[Entry]]


class InstalledApps:
    """What the settings say: the entries, where they were read, and the marker if any."""

    __slots__ = ("entries", "marker", "source")

    def __init__(self, entries: list[Entry], source: str, marker: tuple[str, int] | None) -> None:
        self.entries = entries
        """``INSTALLED_APPS``'s strings, in order."""
        self.source = source
        """The settings file read first, relative to the project root (POSIX)."""
        self.marker = marker
        """The file and line of the ``# karni:apps`` marker that follows the assignment."""


def _walk(node: _ast.AST) -> list[_ast.AST]:
    """Every node below ``node`` (``ast.walk`` without importing :mod:`ast`)."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        for field in current._fields:
            value = getattr(current, field, None)
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, _ast.AST))
            elif isinstance(value, _ast.AST):
                stack.append(value)
    return found


def _string(node: _ast.AST | None) -> str | None:
    if isinstance(node, _ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _dotted(name: str | None) -> str | None:
    """``name`` when it is a dotted module name (``pkg.settings.local``), else None."""
    if name and all(part.isidentifier() for part in name.split(".")):
        return name
    return None


def named_settings_module(root: str) -> str | None:
    """The settings module ``manage.py`` names (``setdefault`` or an assignment), or None."""
    path = os.path.join(root, "manage.py")
    text = read(path)
    if text is None or SETTINGS_VARIABLE not in text:
        return None
    module = parse(path, text)
    if module is None:
        return None
    for node in _walk(module):
        if isinstance(node, _ast.Call) and isinstance(node.func, _ast.Attribute):
            arguments = node.args
            setdefault = node.func.attr == "setdefault" and len(arguments) >= 2
            if setdefault and _string(arguments[0]) == SETTINGS_VARIABLE:
                return _dotted(_string(arguments[1]))
        elif isinstance(node, _ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, _ast.Subscript) and _string(target.slice) == SETTINGS_VARIABLE:
                return _dotted(_string(node.value))
    return None


def module_file(base: str, parts: list[str]) -> str | None:
    """``base/a/b.py`` or ``base/a/b/__init__.py`` for the parts ``[a, b]``, if either is a file."""
    if not parts:
        return None
    stem = os.path.join(base, *parts)
    for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
        if isfile(candidate):
            return candidate
    return None


class _Reader:
    """Follows settings files the way Python would run them, strings of lists only."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.modules: dict[str, _Names] = {}
        self.running: set[str] = set()
        self.files = 0
        self.assigned: tuple[str, int] | None = None

    def namespace(self, path: str) -> _Names:
        """The names the module at ``path`` defines (each module read once)."""
        if path in self.modules:
            return self.modules[path]
        names: _Names = {}
        self.run(path, names)
        self.modules[path] = names
        return names

    def run(self, path: str, names: _Names) -> None:
        """Follow the file at ``path`` into ``names``."""
        if path in self.running or self.files >= MAX_FILES:
            return
        module = parse(path)
        if module is None:
            return
        self.files += 1
        self.running.add(path)
        try:
            self.body(module.body, path, names)
        finally:
            self.running.discard(path)

    def body(self, statements: list[_ast.stmt], path: str, names: _Names) -> None:
        for statement in statements:
            if isinstance(statement, (_ast.Assign, _ast.AnnAssign, _ast.AugAssign)):
                self.assign(statement, path, names)
            elif isinstance(statement, _ast.Expr) and isinstance(statement.value, _ast.Call):
                self.call(statement.value, path, names)
            elif isinstance(statement, _ast.ImportFrom):
                self.import_from(statement, path, names)
            elif isinstance(statement, _ast.If):
                self.body(statement.body + statement.orelse, path, names)
            elif isinstance(statement, _ast.Try):
                handlers = [line for handler in statement.handlers for line in handler.body]
                parts = statement.body + handlers + statement.orelse + statement.finalbody
                self.body(parts, path, names)
            elif isinstance(statement, _ast.With):
                self.body(statement.body, path, names)

    def assign(self, statement: _ast.stmt, path: str, names: _Names) -> None:
        value: _ast.expr | None
        if isinstance(statement, _ast.Assign):
            targets, value = statement.targets, statement.value
        else:
            assert isinstance(statement, (_ast.AnnAssign, _ast.AugAssign))
            targets, value = [statement.target], statement.value
        if value is None:
            return
        found = self.value(value, path, names)
        for target in targets:
            if not isinstance(target, _ast.Name):
                continue
            if isinstance(statement, _ast.AugAssign):
                if isinstance(statement.op, _ast.Add):
                    names[target.id] = names.get(target.id, []) + (found or [])
                continue
            if target.id == "INSTALLED_APPS":
                self.assigned = (path, statement.lineno)
            if found is None:
                names.pop(target.id, None)
            else:
                names[target.id] = list(found)

    def value(self, node: _ast.AST, path: str, names: _Names) -> list[Entry] | None:
        """The strings of a list expression, or None when it is not one Karni can follow."""
        if isinstance(node, (_ast.List, _ast.Tuple, _ast.Set)):
            entries: list[Entry] = []
            for element in node.elts:
                text = _string(element)
                if text is not None:
                    entries.append((text, path, element.lineno))
                elif isinstance(element, _ast.Starred):
                    entries += self.value(element.value, path, names) or []
            return entries
        if isinstance(node, _ast.BinOp) and isinstance(node.op, _ast.Add):
            left = self.value(node.left, path, names)
            right = self.value(node.right, path, names)
            return None if left is None and right is None else (left or []) + (right or [])
        if isinstance(node, _ast.Name):
            known = names.get(node.id)
            return None if known is None else list(known)
        if isinstance(node, _ast.Call):  # list(A), tuple(A), env.list("X", default=[...])
            parts = [self.value(argument, path, names) for argument in node.args]
            parts += [self.value(keyword.value, path, names) for keyword in node.keywords]
            found = [part for part in parts if part is not None]
            return [entry for part in found for entry in part] if found else None
        return None

    def call(self, call: _ast.Call, path: str, names: _Names) -> None:
        """``X.append("a")``, ``X.extend([...])``, ``X.insert(0, "a")`` and ``include(...)``."""
        function = call.func
        name = function.attr if isinstance(function, _ast.Attribute) else None
        if isinstance(function, _ast.Name):
            name = function.id
        if name == "include":
            self.include(call, path, names)
            return
        if not isinstance(function, _ast.Attribute) or not isinstance(function.value, _ast.Name):
            return
        target = names.get(function.value.id)
        if target is None or not call.args:
            return
        if name == "append":
            target += self.value(_ast.List(elts=call.args[:1]), path, names) or []
        elif name == "extend":
            target += self.value(call.args[0], path, names) or []
        elif name == "insert" and len(call.args) == 2:
            added = self.value(_ast.List(elts=call.args[1:]), path, names) or []
            if isinstance(call.args[0], _ast.Constant) and call.args[0].value == 0:
                target[0:0] = added
            else:
                target += added

    def include(self, call: _ast.Call, path: str, names: _Names) -> None:
        """django-split-settings: each included file runs in the including module's names."""
        folder = os.path.dirname(path)
        for argument in call.args:
            if isinstance(argument, _ast.Call) and argument.args:  # optional("local.py")
                argument = argument.args[0]
            pattern = _string(argument)
            if pattern is None or os.path.isabs(pattern) or ".." in pattern.split("/"):
                continue
            for file in _matching(folder, pattern):
                self.run(file, names)

    def import_from(self, statement: _ast.ImportFrom, path: str, names: _Names) -> None:
        """``from .base import *`` and ``from pkg.settings.base import INSTALLED_APPS``."""
        parts = statement.module.split(".") if statement.module else []
        if statement.level:
            base = os.path.dirname(path)
            for _ in range(statement.level - 1):
                base = os.path.dirname(base)
            if not (base + os.sep).startswith(self.root + os.sep) and base != self.root:
                return
        else:
            base = self.root
        file = module_file(base, parts)
        if file is None:
            return
        found = self.namespace(file)
        for alias in statement.names:
            if alias.name == "*":
                names.update({key: list(value) for key, value in found.items() if key[:1] != "_"})
            elif alias.name in found:
                names[alias.asname or alias.name] = list(found[alias.name])


def _matching(folder: str, pattern: str) -> list[str]:
    """The files ``pattern`` names below ``folder``; ``*`` in the last part matches, sorted."""
    *parents, last = pattern.split("/")
    base = os.path.join(folder, *parents)
    if "*" not in last:
        candidate = os.path.join(base, last)
        return [candidate] if isfile(candidate) else []
    head, _, tail = last.partition("*")
    if "*" in tail:
        return []  # one wildcard, as settings files use it ("components/*.py")
    try:
        entries = sorted(listdir(base))
    except OSError:
        return []
    fits = [e for e in entries if e.startswith(head) and e.endswith(tail)]
    return [os.path.join(base, e) for e in fits if len(e) >= len(head) + len(tail)]


def _candidates(root: str, module: str | None) -> list[str]:
    """The settings files to try, in order (see the module's docstring)."""
    found = []
    if module is not None:
        named = module_file(root, module.split("."))
        if named is not None:
            found.append(named)
    karni = os.path.join(root, *SETTINGS_FILE.split("/"))
    if not found and isfile(karni):
        found.append(karni)
    if found:
        return found
    try:
        tops = sorted(listdir(root))
    except OSError:
        return []
    for top in tops:
        if top[:1] in "._" or top in _SKIPPED_TOP or not isdir(os.path.join(root, top)):
            continue
        candidate = module_file(os.path.join(root, top), ["settings"])
        if candidate is not None and "INSTALLED_APPS" in (read(candidate) or ""):
            found.append(candidate)
            break
    return found


def _package_modules(init: str) -> list[str]:
    """The modules of the package whose ``__init__.py`` is ``init``: the usual bases first."""
    folder = os.path.dirname(init)
    try:
        names = sorted(name for name in listdir(folder) if name.endswith(".py"))
    except OSError:
        return []
    names = [name for name in names if name != "__init__.py"]
    first = [f"{stem}.py" for stem in _PACKAGE_FIRST if f"{stem}.py" in names]
    return [os.path.join(folder, name) for name in first + [n for n in names if n not in first]]


def _marker(assigned: tuple[str, int] | None) -> tuple[str, int] | None:
    """The first ``# karni:apps`` line at or after the last ``INSTALLED_APPS =`` in its file."""
    if assigned is None:
        return None
    path, start = assigned
    text = read(path) or ""
    for number, line in enumerate(text.splitlines(), 1):
        if number >= start and line.strip().startswith(APPS_MARKER):
            return path, number
    return None


def read_installed_apps(root: str) -> tuple[InstalledApps | None, str | None, list[str]]:
    """``INSTALLED_APPS`` as the settings build it.

    Returns:
        ``(apps, module, tried)``: the apps (None when no settings file sets
        them), the module ``manage.py`` names (None when it names none) and
        the settings files read, relative to ``root``.
    """
    module = named_settings_module(root)
    tried: list[str] = []
    for candidate in _candidates(root, module):
        files = [candidate]
        if candidate.endswith("__init__.py"):
            files += _package_modules(candidate)
        for file in files:
            reader = _Reader(root)
            names = reader.namespace(file)
            tried.append(os.path.relpath(file, root).replace(os.sep, "/"))
            if "INSTALLED_APPS" in names:
                marker = _marker(reader.assigned)
                return InstalledApps(names["INSTALLED_APPS"], tried[-1], marker), module, tried
    return None, module, tried
