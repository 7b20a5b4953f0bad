"""A project's ``karni.rules.py`` as last parsed, remembered by its exact text.

Every project ``karni new`` makes has the file, and ``karni rules``,
``check`` and ``doctor`` read it on every run. Parsing it needs the
compiler's AST nodes (``_ast``) and the registry of Karni's rules, about a
sixth of a bare interpreter start. So what a parse found is kept in Karni's
cache folder (:mod:`karni.agent.common.cache`), one file per project, with
the text it was read from and the size and modification time of the reader
that judged it (:mod:`karni.cli.rules.parse` and the registry, so an upgrade
of Karni judges the file again). It is used only while the file's text is
exactly that text; a file that breaks the format is never remembered, so
its error is reported on every run. Every failure here means "parse it",
never an error. See docs/performance.md.
"""

from __future__ import annotations

import os

from karni.agent.common.cache import cache_file, read_cache, write_cache
from karni.agent.common.jsontext import dumps, loads
from karni.cli.rules.model import Rule, RulesFile

__all__ = ["TAG", "cached_rules_file", "remember_rules_file"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAG = "karni-rules-file 1"
"""The cache files' format tag."""

_KIND = "rules-file"
_READER = ("parse.py", "registry.py")
"""The modules (beside this one) whose judgement a cached parse holds."""


def _reader_stamp() -> list[list[int]] | None:
    folder = os.path.dirname(os.path.abspath(__file__))
    try:
        found = [os.stat(os.path.join(folder, name)) for name in _READER]
    except OSError:
        return None
    return [[info.st_mtime_ns, info.st_size] for info in found]


def _text(source: bytes) -> str | None:
    try:
        return source.decode("utf-8")
    except UnicodeDecodeError:  # another encoding: parsed every time
        return None


def cached_rules_file(path: str, source: bytes) -> RulesFile | None:
    """What ``source`` parsed to when ``path`` last held exactly it, else None."""
    text, file = _text(source), cache_file(_KIND, path)
    body = None if text is None or file is None else read_cache(file, TAG)
    if body is None:
        return None

    try:
        stored = loads(body)
        if stored[0] != text or stored[1] != _reader_stamp():
            return None
        return _rules_file(path, stored[2])
    except (ValueError, RecursionError, TypeError, KeyError, IndexError, AttributeError):
        return None  # a foreign or damaged entry


def _rules_file(path: str, data: dict[str, Any]) -> RulesFile:
    return RulesFile(
        path,
        tuple(Rule(**fields) for fields in data["add"]),
        {code: dict(fields) for code, fields in data["override"].items()},
        frozenset(data["disable"]),
        dict(data["adapters"]),
    )


def remember_rules_file(path: str, source: bytes, rules_file: RulesFile) -> None:
    """Keep what ``source``, read at ``path``, parsed to, for :func:`cached_rules_file`."""
    text, file, stamp = _text(source), cache_file(_KIND, path), _reader_stamp()
    if text is None or file is None or stamp is None:
        return

    parsed = {
        "add": [rule.as_dict() for rule in rules_file.add],
        "override": rules_file.override,
        "disable": sorted(rules_file.disable),
        "adapters": rules_file.adapters,
    }
    try:
        body = dumps([text, stamp, parsed], compact=True)
    except (TypeError, RecursionError):
        return
    write_cache(file, TAG, body)
