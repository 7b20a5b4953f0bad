"""What a set of edits did to a file, said by the names it added and removed.

An agent's summary may be vague or missing, but the edits themselves say
what changed: the functions, classes, keys and other names that appear in
the written text and not in the replaced text (added), or the other way
round (removed), and the explanatory comments the edits wrote. Names are
what a later agent can search for, so a file's notes prefer them to prose
(``docs/historian/file-notes.md``). Two edits where the second writes back
exactly what the first replaced are an undo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

__all__ = [
    "Change",
    "change_of",
    "comments_added",
    "distinctive",
    "identifiers",
    "inverse_of",
    "names_in",
]

_NAME = re.compile(r"(?<![\w$#.\\-])[A-Za-z_$][\w$]*(?![\w$])")
_DEFINITION = re.compile(
    r"(?:\b(?:def|class|function|interface|type|enum|struct|trait|impl|fn|func|const|let|var|"
    r"export (?:default )?(?:async )?(?:function|class|const|let|type|interface|enum))\s+"
    r"([A-Za-z_$][\w$]*))|^\s*[\"']?([A-Za-z_$][\w$-]*)[\"']?\s*[:=](?!=)|"
    r"^\s*(?:async\s+)?(?:(?:public|private|protected|static|readonly)\s+)*([A-Za-z_$][\w$]*)\s*"
    r"\(.*\)\s*(?::[^=;]*)?\{\s*$",
    re.M,
)
_COMMENT = re.compile(r"^\s*(?://+|#+(?![!\[{])|/\*+|\*+(?!/)|--|<!--)\s*(.*?)\s*(?:\*/|-->)?\s*$")
_CODE_LIKE = re.compile(r"[;{}=]\s*$|\w\(.*\)\s*;?\s*$|^\s*(?:import|from|return|if|for)\b")
_KEYWORDS = frozenset(
    [
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "def",
        "default",
        "del",
        "delete",
        "do",
        "elif",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "from",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "interface",
        "is",
        "lambda",
        "let",
        "new",
        "none",
        "not",
        "null",
        "of",
        "or",
        "pass",
        "private",
        "protected",
        "public",
        "raise",
        "readonly",
        "return",
        "self",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "typeof",
        "undefined",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "True",
        "False",
        "None",
        "string",
        "number",
        "boolean",
        "any",
        "unknown",
        "never",
        "object",
        "Promise",
        "void",
    ]
)


_DISTINCTIVE: dict[str, bool] = {}


def distinctive(name: str) -> bool:
    """A name worth quoting: camelCase, PascalCase with two capitals, snake_case or a digit."""
    known = _DISTINCTIVE.get(name)
    if known is None:
        if len(_DISTINCTIVE) > 50_000:
            _DISTINCTIVE.clear()
        known = _DISTINCTIVE[name] = _looks_like_code(name)
    return known


def _looks_like_code(name: str) -> bool:
    if name in _KEYWORDS or len(name) < 3:
        return False
    inner = name[1:]
    return (
        "_" in name.strip("_")
        or (any(c.isupper() for c in inner) and any(c.islower() for c in name))
        or (any(c.isdigit() for c in name) and any(c.isalpha() for c in name))
    )


_URL = re.compile(r"\b\w+://\S+")


_MEMO: dict[tuple[str, str, str], Any] = {}
"""Results by (function, text, text): a session's edits are read for every file's notes."""
_MEMO_SIZE = 4096


def _memo(kind: str, first: str, second: str, work: Callable[[], Any]) -> Any:
    key = (kind, first, second)
    found = _MEMO.get(key)
    if found is None:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        found = _MEMO[key] = work()
    return found


def names_in(text: str) -> frozenset[str]:
    """The distinctive names (identifiers that look like code) in ``text``, outside URLs."""
    found: frozenset[str] = _memo("names", text, "", lambda: _names_in(text))
    return found


def _names_in(text: str) -> frozenset[str]:
    if "://" in text:
        text = _URL.sub(" ", text)
    return frozenset(name for name in _NAME.findall(text) if distinctive(name))


def identifiers(text: str) -> frozenset[str]:
    """The names ``text`` defines or keys: functions, classes, variables, object and JSON keys."""
    found: frozenset[str] = _memo("identifiers", text, "", lambda: _identifiers(text))
    return found


def _identifiers(text: str) -> frozenset[str]:
    found = set()
    for match in _DEFINITION.finditer(text):
        name = match.group(1) or match.group(2) or match.group(3)
        if name and name not in _KEYWORDS and len(name) > 1:
            found.add(name)
    return frozenset(found)


def comments_added(old: str, new: str) -> list[str]:
    """Explanatory comments the written text has and the replaced text had not (whole sentences)."""
    return list(_memo("comments", old, new, lambda: tuple(_comments_added(old, new))))


def _comments_added(old: str, new: str) -> list[str]:
    before = {" ".join(line.split()) for line in old.splitlines()}
    found = []
    for line in new.splitlines():
        if " ".join(line.split()) in before:
            continue
        match = _COMMENT.match(line)
        if not match:
            continue
        text = match.group(1).strip()
        words = re.findall(r"[A-Za-z]{2,}", text)
        capitalised = sum(word[0].isupper() for word in words)
        prose = len(words) >= 4 and capitalised * 2 <= len(words) + 1
        if prose and not _CODE_LIKE.search(text) and len(words) * 5 >= len(text) // 2:
            found.append(text)
    return found


@dataclass
class Change:
    """The net effect of edits on one file.

    Attributes:
        added: Names the written text defines that the replaced text did not.
        removed: Names the replaced text defined that the written text does not.
        mentioned: Every distinctive name either side holds (what the agent's
            words about this file will name).
        comments: Explanatory comments the edits wrote.
        created: True when a write made the file from nothing.
    """

    added: list[str]
    removed: list[str]
    mentioned: set[str]
    comments: list[str]
    created: bool


def change_of(pairs: Iterable[tuple[str, str]], *, code: bool = True) -> Change:
    """The net effect of ``(replaced, written)`` text pairs, in the order they were made.

    Names come in the order they first appear (by name where two start at the
    same place: ``TodoItem`` and ``TodoItemProps``), so the same edits always
    give the same change.

    In ``code`` a replacement's names that come or go count (imports, calls);
    in a data file (JSON, YAML, CSS …) only the keys it defines do.
    """
    added: dict[str, None] = {}
    removed: dict[str, None] = {}
    mentioned: set[str] = set()
    comments: list[str] = []
    created = False
    for old, new in pairs:
        before, after = identifiers(old), identifiers(new)
        if old and code:  # a replacement: names it brings in or takes out count too
            before, after = before | names_in(old), after | names_in(new)
        created = created or (not old and bool(new))
        for name in sorted(after - before, key=lambda n: (new.find(n), n)):
            removed.pop(name, None) if name in removed else added.setdefault(name)
        for name in sorted(before - after, key=lambda n: (old.find(n), n)):
            added.pop(name, None) if name in added else removed.setdefault(name)
        mentioned |= names_in(old) | names_in(new)
        comments += [c for c in comments_added(old, new) if c not in comments]
    return Change(list(added), list(removed), mentioned, comments, created)


def inverse_of(pairs: Sequence[tuple[str, str]], earlier: Sequence[tuple[str, str]]) -> bool:
    """Whether ``pairs`` write back exactly what ``earlier`` replaced (an undo of that edit)."""
    if not pairs or len(pairs) != len(earlier):
        return False
    norm = _normal
    return all(
        norm(old) == norm(e_new) and norm(new) == norm(e_old) and (old or new)
        for (old, new), (e_old, e_new) in zip(pairs, reversed(earlier), strict=True)
    )


def _normal(text: str) -> str:
    return " ".join(text.split())
