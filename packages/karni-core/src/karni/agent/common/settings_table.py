"""Every declared setting in one tree: finding a key, checking a file, resolving a value.

A :class:`SettingsTable` is built from the :class:`~karni.agent.common.settings.Setting`
declarations of every installed package. It checks one configuration file
(:meth:`SettingsTable.validate`: unknown keys, wrong types, values out of
range, user-only keys in a project file, even inside a table such as a
model entry's ``base_url``), both files together
(:func:`validate_layers`: a selected profile must exist) and says which value
wins for a key (:func:`resolve`: project, then the selected profile, then
the user, then the default). ``karni config``, ``karni check`` and the
historian all use it, so there is one rule set.
"""

from __future__ import annotations

from karni.agent.common.settings import BOTH, PROJECT, USER, Forbidden, Setting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from karni.agent.common.config import ConfigLayer

__all__ = [
    "MISSING",
    "PROFILES_KEY",
    "PROFILE_KEY",
    "Problem",
    "Resolved",
    "SettingsTable",
    "resolve",
    "selected_profile",
    "validate_layers",
    "value_at",
]

PROFILE_KEY = "profile"
"""The top-level key selecting a user profile."""
PROFILES_KEY = "profiles"
"""The user-only table of profiles: ``[profiles.NAME.…]``."""

WILDCARD = "*"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
"""What :func:`value_at` returns for a key a document does not set."""


class Problem:
    """One thing wrong in one file: the file, the dotted key and what is wrong.

    ``unknown`` is True when the key is declared nowhere in its table (rather
    than set to a wrong value or in the wrong file), so a caller can tell a
    table no installed package declares from a mistake without reading the
    message.
    """

    __slots__ = ("key", "message", "path", "unknown")

    def __init__(self, path: str, key: str, message: str, *, unknown: bool = False) -> None:
        self.path = path
        self.key = key
        self.message = message
        self.unknown = unknown

    def __str__(self) -> str:
        return f"{self.path}: `{self.key}` {self.message}"

    def __repr__(self) -> str:
        unknown = ", unknown=True" if self.unknown else ""
        return f"Problem({self.path!r}, {self.key!r}, {self.message!r}{unknown})"


class _Node:
    """A table in the tree: its named children, and the setting when it is a leaf."""

    __slots__ = ("children", "scopes", "setting")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.setting: Setting | None = None
        self.scopes: set[str] = set()

    def child(self, name: str) -> _Node | None:
        return self.children.get(name) or self.children.get(WILDCARD)

    @property
    def scope(self) -> str:
        return next(iter(self.scopes)) if len(self.scopes) == 1 else BOTH

    def known(self) -> list[str]:
        return sorted(
            name
            for name, node in self.children.items()
            if name != WILDCARD and not (node.setting and isinstance(node.setting.kind, Forbidden))
        )


def _profile_copy(setting: Setting) -> Setting:
    copy = Setting(
        f"{PROFILES_KEY}.{WILDCARD}.{setting.name}",
        setting.kind,
        setting.doc,
        scope=USER,
        default_text="none",
    )
    copy.owner = setting.owner
    return copy


class SettingsTable:
    """The declared settings as a tree of dotted names (``*`` matches any key)."""

    def __init__(self, settings: Iterable[Setting]) -> None:
        declared = list(settings)
        self.settings = declared + [_profile_copy(s) for s in declared if s.profile]
        self._root = _Node()
        for setting in self.settings:
            self._insert(setting)

    def _insert(self, setting: Setting) -> None:
        node = self._root
        for segment in setting.name.split("."):
            node.scopes.add(setting.scope)
            node = node.children.setdefault(segment, _Node())
        node.scopes.add(setting.scope)
        node.setting = setting

    def _node(self, key: str) -> _Node | None:
        node: _Node | None = self._root
        for segment in key.split("."):
            node = node.child(segment) if node is not None else None
        return node

    def find(self, key: str) -> Setting | None:
        """The setting a concrete dotted key (``historian.expand_tools.Bash``) names."""
        node = self._node(key)
        return node.setting if node is not None else None

    def is_table(self, key: str) -> bool:
        """Whether ``key`` names a table of settings (``historian.claude_code``)."""
        node = self._node(key)
        return node is not None and node.setting is None and bool(node.children)

    def known_under(self, key: str) -> list[str]:
        """The keys a table (``""`` for the top level) may hold."""
        node = self._root if not key else self._node(key)
        return node.known() if node is not None else []

    def scope_of(self, key: str) -> str:
        """Which files may set ``key`` (a setting or a table of them)."""
        node = self._node(key)
        return node.scope if node is not None else BOTH

    def validate(
        self,
        document: Mapping[str, object],
        path: str,
        scope: str,
        *,
        roots: Sequence[str] | None = None,
    ) -> list[Problem]:
        """Everything wrong in one file's ``document``, one problem per key.

        Args:
            document: The parsed TOML.
            path: The file, for messages.
            scope: :data:`~karni.agent.common.settings.PROJECT` or
                :data:`~karni.agent.common.settings.USER`: which file it is.
            roots: Check only these top-level keys (a package checking its own).
        """
        if roots is not None:
            document = {key: value for key, value in document.items() if key in roots}
        problems: list[Problem] = []
        self._walk(self._root, document, "", path, scope, problems)
        return problems

    def _walk(
        self,
        node: _Node,
        table: Mapping[str, object],
        prefix: str,
        path: str,
        scope: str,
        problems: list[Problem],
    ) -> None:
        for name, value in table.items():
            key = f"{prefix}.{name}" if prefix else name
            child = node.child(name)
            if child is None:
                known = ", ".join(node.known()) or "none"
                message = f"is not a known setting; known: {known}"
                problems.append(Problem(path, key, message, unknown=True))
            elif scope == PROJECT and child.scope == USER:
                problems.append(Problem(path, key, _USER_ONLY))
            elif child.setting is not None:
                found = child.setting.kind.problems(value, key)
                problems.extend(Problem(path, at, message) for at, message in found)
                if scope == PROJECT:
                    inner = child.setting.kind.user_only(value, key)
                    problems.extend(Problem(path, at, _USER_ONLY_FIELD) for at in inner)
            elif not isinstance(value, dict):
                problems.append(Problem(path, key, f"must be a table; write [{key}]"))
            else:
                self._walk(child, value, key, path, scope, problems)


_USER_ONLY = (
    "can be set only in your user configuration ($XDG_CONFIG_HOME/karni/config.toml), "
    "never by a project; move it there"
)
_USER_ONLY_FIELD = (
    "can be set only in your user configuration ($XDG_CONFIG_HOME/karni/config.toml), "
    "never by a project; move the whole entry there (or into a profile)"
)


def value_at(document: Mapping[str, object], key: str) -> object:
    """The value ``document`` holds at the dotted ``key``, or :data:`MISSING`."""
    value: object = document
    for segment in key.split("."):
        if not isinstance(value, dict) or segment not in value:
            return MISSING
        value = value[segment]
    return value


def selected_profile(layers: Sequence[ConfigLayer]) -> tuple[str | None, ConfigLayer | None]:
    """The profile name ``profile = "NAME"`` selects (the winning file's), and that file."""
    for layer in layers:
        name = layer.data.get(PROFILE_KEY)
        if isinstance(name, str) and name:
            return name, layer
    return None, None


def _profile_problem(layers: Sequence[ConfigLayer]) -> Problem | None:
    name, where = selected_profile(layers)
    if name is None or where is None:
        return None
    user = next((layer for layer in layers if layer.scope == USER), None)
    profiles = user.data.get(PROFILES_KEY) if user is not None else None
    if isinstance(profiles, dict) and isinstance(profiles.get(name), dict):
        return None
    user_path = user.path if user is not None else "your user configuration"
    return Problem(
        where.path,
        PROFILE_KEY,
        f"= {name!r} but {user_path} defines no [{PROFILES_KEY}.{name}]; "
        f"add it there or remove `{PROFILE_KEY}`",
    )


def validate_layers(
    table: SettingsTable, layers: Sequence[ConfigLayer], *, roots: Sequence[str] | None = None
) -> list[Problem]:
    """Everything wrong in the project's and the user's file, and between them."""
    problems: list[Problem] = []
    for layer in layers:
        problems += table.validate(layer.data, layer.path, layer.scope, roots=roots)
    if roots is None or PROFILE_KEY in roots:
        profile = _profile_problem(layers)
        if profile is not None and not any(p.key == PROFILE_KEY for p in problems):
            problems.append(profile)
    return problems


class Resolved:
    """A setting's value in effect, where it came from and that file (None for a default)."""

    __slots__ = ("path", "source", "value")

    def __init__(self, value: object, source: str, path: str | None) -> None:
        self.value = value
        self.source = source
        self.path = path

    def __repr__(self) -> str:
        return f"Resolved({self.value!r}, {self.source!r}, {self.path!r})"


def resolve(table: SettingsTable, layers: Sequence[ConfigLayer], key: str) -> Resolved:
    """The value of ``key``: the project's, then the selected profile's, then the user's.

    ``source`` is the layer's scope (``project``, ``user``), ``profile NAME``
    or ``default``. Values are returned as the file holds them; check the
    files first (:func:`validate_layers`). A setting only the user may set
    (``scope=USER``) is never taken from a project's file: a cloned
    repository cannot set it, so its value there is not the one in effect.
    """
    setting = table.find(key)
    name, _ = selected_profile(layers)
    user_only = setting is not None and setting.scope == USER
    for layer in layers:
        if user_only and layer.scope == PROJECT:
            continue
        if layer.scope == USER and name is not None and setting is not None and setting.profile:
            value = value_at(layer.data, f"{PROFILES_KEY}.{name}.{key}")
            if value is not MISSING:
                return Resolved(value, f"profile {name}", layer.path)
        value = value_at(layer.data, key)
        if value is not MISSING:
            return Resolved(value, layer.scope, layer.path)
    default = setting.default if setting is not None else None
    return Resolved(default, "default", None)
