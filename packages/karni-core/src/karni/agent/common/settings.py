"""How a setting is declared: its dotted name, type, default, scope and one line of doc.

Every setting of Karni and of its providers is declared once, as a
:class:`Setting`, in a module its package names under the ``karni.settings``
entry-point group (see :mod:`karni.agent.common.settings_registry`). A
setting's *kind* says what it may hold, checks a value read from a file and
turns the text given to ``karni config set`` into a value. The checking of a
whole file against every declaration is :mod:`karni.agent.common.settings_table`;
the generated page is ``docs/reference/configuration.md``.

This module imports nothing beyond the standard library's core, so reading
the declarations stays cheap for ``karni check``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "BOTH",
    "PROJECT",
    "USER",
    "AnyOf",
    "Boolean",
    "Field",
    "Forbidden",
    "Integer",
    "Kind",
    "ListOf",
    "Number",
    "Problems",
    "Setting",
    "Table",
    "Text",
    "ValueTextError",
    "toml_literal",
]

PROJECT = "project"
"""Scope: only the project's ``.karni/config.toml`` may set it."""
USER = "user"
"""Scope: only the user's ``karni/config.toml`` (``--global``) may set it."""
BOTH = "both"
"""Scope: either file; the project's wins."""

Problems = list[tuple[str, str]]
"""``(dotted key, what is wrong with it)`` pairs, the key first so files can be named."""

_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})


class ValueTextError(ValueError):
    """The text given for a setting is not a value of its kind; the message says what is."""


def toml_literal(value: object) -> str:
    """``value`` written as TOML would write it (for messages and ``karni config``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        escaped = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped)
        return f'"{escaped}"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{key} = {toml_literal(item)}" for key, item in value.items())
        return "{" + items + "}"
    return repr(value) if isinstance(value, int | float) else str(value)


class Kind:
    """What a setting may hold. Subclasses check values and parse command-line text."""

    label = "value"
    """How the reference and messages name the kind."""

    def accepts(self, value: object) -> bool:
        """Whether ``value`` has this kind's TOML type (its range is :meth:`problems`')."""
        raise NotImplementedError

    def problems(self, value: object, key: str) -> Problems:
        """What is wrong with ``value`` set at ``key``; empty when it is valid."""
        if not self.accepts(value):
            return [(key, f"must be {self.label}, not {toml_literal(value)}")]
        return []

    def user_only(self, value: object, key: str) -> list[str]:
        """The dotted keys inside ``value`` that only a user's file may set (see :class:`Field`)."""
        return []

    def parse(self, text: str) -> object:
        """The value ``text`` (from ``karni config set``) stands for.

        Raises:
            ValueTextError: ``text`` is not a value of this kind.
        """
        return _toml_value(text)


def _toml_value(text: str) -> object:
    """``text`` read as one TOML value (an array, inline table, number or string)."""
    # bench row "karni-historian brief FILE (historian store, 100,000 compartments)" runs without it
    import tomllib

    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        raise ValueTextError(f"`{text}` is not a TOML value") from None


class Boolean(Kind):
    """``true`` or ``false`` (``only`` limits it to one of them, e.g. ``false`` to turn off)."""

    def __init__(self, only: bool | None = None) -> None:
        self.only = only
        self.label = "true or false" if only is None else toml_literal(only)

    def accepts(self, value: object) -> bool:
        """See :meth:`Kind.accepts`."""
        return isinstance(value, bool) and self.only in (None, value)

    def parse(self, text: str) -> object:
        """See :meth:`Kind.parse`."""
        word = text.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
        raise ValueTextError(f"takes {self.label} (also yes/no, on/off, 1/0), not `{text}`")


class Number(Kind):
    """A number from ``low`` to ``high``; with ``integer``, a whole number."""

    def __init__(self, low: float, high: float, *, integer: bool = False) -> None:
        self.low = low
        self.high = high
        self.integer = integer
        what = "a whole number" if integer else "a number"
        self.label = f"{what} from {_number_text(low)} to {_number_text(high)}"

    def accepts(self, value: object) -> bool:
        """See :meth:`Kind.accepts`."""
        kinds = int if self.integer else int | float
        return isinstance(value, kinds) and not isinstance(value, bool)

    def problems(self, value: object, key: str) -> Problems:
        """See :meth:`Kind.problems`."""
        if self.accepts(value) and self.low <= value <= self.high:  # type: ignore[operator]
            return []
        return [(key, f"must be {self.label}, not {toml_literal(value)}")]

    def parse(self, text: str) -> object:
        """See :meth:`Kind.parse`."""
        try:
            value = _toml_value(text.strip().replace(",", "_"))
        except ValueTextError:
            value = text
        if not self.accepts(value):
            raise ValueTextError(f"takes {self.label}, not `{text}`")
        return value


def _number_text(number: float) -> str:
    """``number`` as TOML may write it: ``100_000_000``, ``0.05``."""
    if float(number).is_integer():
        return f"{int(number):_}"
    return f"{number:g}"


def Integer(low: int, high: int) -> Number:
    """A whole number from ``low`` to ``high``."""
    return Number(low, high, integer=True)


class Text(Kind):
    """A string: one of ``choices`` when given, else anything ``check`` accepts.

    ``check`` returns what is wrong with the string (a phrase such as
    ``"is not backend/model"``), or None when it is fine.
    """

    def __init__(
        self,
        *,
        choices: Sequence[str] = (),
        check: Callable[[str], str | None] | None = None,
        label: str = "a string",
    ) -> None:
        self.choices = tuple(choices)
        self.check = check
        self.label = f"one of {', '.join(self.choices)}" if self.choices else label

    def accepts(self, value: object) -> bool:
        """See :meth:`Kind.accepts`."""
        return isinstance(value, str)

    def problems(self, value: object, key: str) -> Problems:
        """See :meth:`Kind.problems`."""
        if not isinstance(value, str) or (self.choices and value not in self.choices):
            return [(key, f"must be {self.label}, not {toml_literal(value)}")]
        problem = self.check(value) if self.check is not None else None
        return [(key, f"= {toml_literal(value)} {problem}")] if problem else []

    def parse(self, text: str) -> object:
        """See :meth:`Kind.parse`."""
        return text


class ListOf(Kind):
    """A list whose every item is of ``item`` (numbered from 1 in messages)."""

    def __init__(self, item: Kind) -> None:
        self.item = item
        self.label = f"a list of {_plural(item.label)}"

    def accepts(self, value: object) -> bool:
        """See :meth:`Kind.accepts`."""
        return isinstance(value, list)

    def problems(self, value: object, key: str) -> Problems:
        """See :meth:`Kind.problems`."""
        if not isinstance(value, list):
            return super().problems(value, key)
        found: Problems = []
        for number, item in enumerate(value, 1):
            found += self.item.problems(item, f"{key}[{number}]")
        return found

    def user_only(self, value: object, key: str) -> list[str]:
        """See :meth:`Kind.user_only`."""
        if not isinstance(value, list):
            return []
        found: list[str] = []
        for number, item in enumerate(value, 1):
            found += self.item.user_only(item, f"{key}[{number}]")
        return found

    def parse(self, text: str) -> object:
        """See :meth:`Kind.parse`."""
        if text.lstrip().startswith("["):
            return _toml_value(text)
        return [self.item.parse(part.strip()) for part in text.split(",") if part.strip()]


def _plural(label: str) -> str:
    for article in ("a ", "an "):
        if label.startswith(article):
            return label[len(article) :].replace("string", "strings", 1)
    return label


class Field:
    """One key of a :class:`Table`: its kind, default (None: no default), doc and scope.

    ``scope`` is :data:`USER` for a key a project must never choose even where
    it may set the table, such as where a model entry sends the user's key:
    a project file holding it is an error, whatever the setting's own scope.
    """

    __slots__ = ("default", "doc", "kind", "scope")

    def __init__(self, kind: Kind, doc: str, default: object = None, *, scope: str = BOTH) -> None:
        if scope not in (BOTH, USER):
            raise ValueError(f"a field's scope must be both or user, not {scope!r}")
        self.kind = kind
        self.doc = doc
        self.default = default
        self.scope = scope


class Table(Kind):
    """An inline table (or sub-table) with known keys, such as a model entry.

    ``title`` names it in the reference, which documents its fields once.
    ``check`` sees the whole table once every field is valid, for rules that
    join fields (a field needing another); it returns ``(field, problem)`` or None.
    """

    def __init__(
        self,
        title: str,
        fields: Mapping[str, Field],
        *,
        required: Sequence[str] = (),
        check: Callable[[Mapping[str, object]], tuple[str, str] | None] | None = None,
    ) -> None:
        self.title = title
        self.fields = dict(fields)
        self.required = tuple(required)
        self.check = check
        self.label = f"a table ({title})"

    def allowed(self) -> list[str]:
        """The keys the table may hold (not the :class:`Forbidden` ones)."""
        return [
            name for name, field in self.fields.items() if not isinstance(field.kind, Forbidden)
        ]

    def accepts(self, value: object) -> bool:
        """See :meth:`Kind.accepts`."""
        return isinstance(value, dict)

    def problems(self, value: object, key: str) -> Problems:
        """See :meth:`Kind.problems`."""
        if not isinstance(value, dict):
            return super().problems(value, key)
        found: Problems = []
        for name, item in value.items():
            field = self.fields.get(name)
            if field is None:
                known = ", ".join(self.allowed())
                found.append((f"{key}.{name}", f"is not a known key; known: {known}"))
            else:
                found += field.kind.problems(item, f"{key}.{name}")
        found += [(f"{key}.{name}", "is required") for name in self.required if name not in value]
        if not found and self.check is not None:
            problem = self.check(value)
            if problem is not None:
                found.append((f"{key}.{problem[0]}", problem[1]))
        return found

    def user_only(self, value: object, key: str) -> list[str]:
        """See :meth:`Kind.user_only`."""
        if not isinstance(value, dict):
            return []
        found: list[str] = []
        for name, item in value.items():
            field = self.fields.get(name)
            if field is None:
                continue
            if field.scope == USER:
                found.append(f"{key}.{name}")
            else:
                found += field.kind.user_only(item, f"{key}.{name}")
        return found


class AnyOf(Kind):
    """One of several kinds, told apart by TOML type (a model id, or a table with ``model``)."""

    def __init__(self, *kinds: Kind) -> None:
        self.kinds = kinds
        self.label = " or ".join(kind.label for kind in kinds)

    def accepts(self, value: object) -> bool:
        """See :meth:`Kind.accepts`."""
        return any(kind.accepts(value) for kind in self.kinds)

    def problems(self, value: object, key: str) -> Problems:
        """See :meth:`Kind.problems`."""
        for kind in self.kinds:
            if kind.accepts(value):
                return kind.problems(value, key)
        return super().problems(value, key)

    def user_only(self, value: object, key: str) -> list[str]:
        """See :meth:`Kind.user_only`."""
        for kind in self.kinds:
            if kind.accepts(value):
                return kind.user_only(value, key)
        return []

    def parse(self, text: str) -> object:
        """See :meth:`Kind.parse`."""
        if text.lstrip().startswith(("[", "{")):
            return _toml_value(text)
        texts_last = sorted(self.kinds, key=lambda kind: isinstance(kind, Text))
        for kind in texts_last:  # `false` is the boolean; a string takes anything
            try:
                return kind.parse(text)
            except ValueTextError:
                continue
        raise ValueTextError(f"takes {self.label}, not `{text}`")


class Forbidden(Kind):
    """A key that is known but never allowed where it is declared; ``reason`` says why.

    For keys a user may well write in the wrong place (``variant`` in a Pi
    block), so the message says where the key belongs instead of "unknown".
    The reference does not list them.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.label = "not allowed here"

    def accepts(self, value: object) -> bool:
        """See :meth:`Kind.accepts`."""
        return False

    def problems(self, value: object, key: str) -> Problems:
        """See :meth:`Kind.problems`."""
        return [(key, self.reason)]

    def parse(self, text: str) -> object:
        """See :meth:`Kind.parse`."""
        raise ValueTextError(self.reason)


class Setting:
    """One declared setting.

    Attributes:
        name: Its dotted name (``historian.claude_code.model``); a ``*``
            segment stands for any key (``historian.expand_tools.*``).
        kind: What it may hold.
        default: Its value when no file sets it; None when there is none.
        scope: Which files may set it: :data:`PROJECT`, :data:`USER` or :data:`BOTH`.
        doc: One line saying what it does.
        profile: Whether a user profile (``profiles.NAME.<name>``) may set it too.
        default_text: How the reference shows the default, when not the value itself.
        owner: The distribution that declares it (filled in when declarations load).
    """

    __slots__ = ("default", "default_text", "doc", "kind", "name", "owner", "profile", "scope")

    def __init__(
        self,
        name: str,
        kind: Kind,
        doc: str,
        *,
        default: object = None,
        scope: str = BOTH,
        profile: bool = False,
        default_text: str = "",
    ) -> None:
        if scope not in (PROJECT, USER, BOTH):
            raise ValueError(f"scope must be project, user or both, not {scope!r}")
        self.name = name
        self.kind = kind
        self.doc = doc
        self.default = default
        self.scope = scope
        self.profile = profile
        self.default_text = default_text
        self.owner = ""

    def __repr__(self) -> str:
        return f"Setting({self.name!r}, scope={self.scope!r})"
