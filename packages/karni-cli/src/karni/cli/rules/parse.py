"""The AST reader behind :func:`karni.cli.rules.file.load_rules_file`.

Separate from the loader because the compiler's AST nodes (``_ast``) take a
few milliseconds to set up, and most projects have no ``karni.rules.py``:
``karni rules`` imports this module only when the file exists and its text
was not parsed before (:mod:`karni.cli.rules.cache`). The format is
described in :mod:`karni.cli.rules.file`.
"""

from __future__ import annotations

import _ast  # the compiler's AST nodes (what `ast` re-exports), without `ast`'s own imports

from karni.agent.common.sanitize import clean_field, clean_line, neutralise
from karni.cli.rules.agents import ADAPTERS
from karni.cli.rules.model import (
    CATEGORIES,
    RULES_FILE_NAME,
    SEVERITIES,
    Rule,
    RulesFile,
    RulesFileError,
)
from karni.cli.rules.registry import karni_rule

__all__ = ["SETTINGS", "parse_rules_source"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from typing import Any

SETTINGS = ("ADD", "OVERRIDE", "DISABLE", "ADAPTERS")
"""The only names the file may assign."""

_NOT_RUN = "karni reads this file without running it"
_ADD_FIELDS = ("code", "rule", "summary", "category", "severity", "rationale", "fix")
_OVERRIDE_FIELDS = ("summary", "rule", "severity", "rationale", "fix")
_MAX_SUMMARY = 100


def parse_rules_source(source: bytes | str, path: str | None = None) -> RulesFile:
    """Parse the text of a ``karni.rules.py`` read from ``path``, without running it.

    Raises:
        RulesFileError: The text breaks a rule of the format
            (see :mod:`karni.cli.rules.file`).
    """
    values = _assigned_values(_syntax_tree(source))
    add = _parse_add(values["ADD"]) if "ADD" in values else ()
    override = _parse_override(values["OVERRIDE"]) if "OVERRIDE" in values else {}
    disable = _parse_disable(values["DISABLE"]) if "DISABLE" in values else frozenset()
    adapters = _parse_adapters(values["ADAPTERS"]) if "ADAPTERS" in values else {}
    return RulesFile(path, add, override, disable, adapters)


def _syntax_tree(source: bytes | str) -> ast.Module:
    """The file's syntax tree; a NUL byte or a syntax error is a :class:`RulesFileError`."""
    # Python releases disagree on how compile() reports a NUL byte: say it ourselves.
    if isinstance(source, bytes):
        before, nul, _ = source.partition(b"\x00")
        line = before.count(b"\n") + 1
    else:
        before_text, nul_text, _ = source.partition("\x00")
        nul, line = nul_text.encode(), before_text.count("\n") + 1
    if nul:
        raise RulesFileError(line, "contains a NUL byte", "save it as UTF-8 text")
    try:
        tree = compile(source, RULES_FILE_NAME, "exec", _ast.PyCF_ONLY_AST)
    except SyntaxError as error:
        raise RulesFileError(
            error.lineno or 1, f"invalid Python syntax ({error.msg})", f"fix it; {_NOT_RUN}"
        ) from None
    assert isinstance(tree, _ast.Module)  # mode "exec" always compiles to a Module
    return tree


def _assigned_values(tree: ast.Module) -> dict[str, ast.expr]:
    """Each setting the file assigns, once, to the literal node it is given."""
    values: dict[str, ast.expr] = {}
    first_line: dict[str, int] = {}
    for index, statement in enumerate(tree.body):
        if index == 0 and _is_docstring(statement):
            continue
        name = _assigned_name(statement)
        if name not in SETTINGS:
            raise RulesFileError(
                statement.lineno,
                f"unknown setting `{name}`",
                "assign only ADD, OVERRIDE, DISABLE or ADAPTERS (upper case)",
            )
        if name in values:
            raise RulesFileError(
                statement.lineno,
                f"`{name}` is assigned twice (first on line {first_line[name]})",
                "keep one assignment",
            )
        assert isinstance(statement, _ast.Assign)
        values[name] = statement.value
        first_line[name] = statement.lineno
    return values


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, _ast.Expr)
        and isinstance(statement.value, _ast.Constant)
        and isinstance(statement.value.value, str)
    )


_STATEMENT_KINDS = {
    "Import": "an import",
    "ImportFrom": "an import",
    "FunctionDef": "a function definition",
    "AsyncFunctionDef": "a function definition",
    "ClassDef": "a class definition",
    "Expr": "a bare expression",
    "AnnAssign": "an annotated assignment",
    "AugAssign": "an augmented assignment",
    "If": "an `if` statement",
    "For": "a loop",
    "While": "a loop",
    "Try": "a `try` statement",
    "With": "a `with` statement",
    "Delete": "a `del` statement",
}


def _assigned_name(statement: ast.stmt) -> str:
    """The single name ``statement`` assigns; any other statement is an error."""
    if isinstance(statement, _ast.Assign):
        if len(statement.targets) == 1 and isinstance(statement.targets[0], _ast.Name):
            return statement.targets[0].id
        kind = "a chained or unpacking assignment"
    else:
        kind = _STATEMENT_KINDS.get(type(statement).__name__, "a statement")
    raise RulesFileError(
        statement.lineno,
        f"{kind} is not allowed",
        f"write only `NAME = literal` lines for ADD, OVERRIDE, DISABLE and ADAPTERS; {_NOT_RUN}",
    )


def _literal(node: ast.expr, what: str) -> Any:
    """The value of a literal node; anything computed is an error at its own line."""
    if isinstance(node, _ast.Constant):
        return node.value
    if isinstance(node, (_ast.List, _ast.Tuple)):
        return [_literal(element, what) for element in node.elts]
    if isinstance(node, _ast.Dict):
        out = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise RulesFileError(
                    value.lineno, f"{what} uses `**` unpacking", "write the entries out"
                )
            out[_hashable(_literal(key, what), key, what)] = _literal(value, what)
        return out
    raise RulesFileError(
        node.lineno,
        f"{what} is not a literal value (found {_node_kind(node)})",
        f"write plain strings, numbers, booleans, lists and dicts; {_NOT_RUN}",
    )


def _hashable(value: Any, node: ast.expr, what: str) -> Any:
    if isinstance(value, (list, dict)):
        raise RulesFileError(node.lineno, f"{what} has a list or dict as a key", "use a string")
    return value


def _node_kind(node: ast.expr) -> str:
    kinds = {
        "Name": "a variable name",
        "Call": "a function call",
        "Attribute": "an attribute",
        "BinOp": "an operation",
        "JoinedStr": "an f-string",
        "Set": "a set",
        "ListComp": "a comprehension",
        "DictComp": "a comprehension",
        "SetComp": "a comprehension",
        "GeneratorExp": "a comprehension",
        "Lambda": "a lambda",
        "Subscript": "a subscript",
        "IfExp": "a conditional expression",
        "UnaryOp": "an operation",
        "BoolOp": "an operation",
        "Compare": "a comparison",
    }
    return kinds.get(type(node).__name__, "an expression")


def _elements(node: ast.expr, what: str, example: str) -> list[ast.expr]:
    if not isinstance(node, (_ast.List, _ast.Tuple)):
        _literal(node, what)  # a computed value gets the more precise message
        raise RulesFileError(node.lineno, f"`{what}` must be a list", f"write {example}")
    return list(node.elts)


def _fields(node: ast.expr, what: str, example: str) -> dict[str, tuple[Any, int]]:
    """A dict literal with string keys: key → (value, line of the value)."""
    if not isinstance(node, _ast.Dict):
        _literal(node, what)
        raise RulesFileError(node.lineno, f"{what} must be a dict", f"write {example}")
    out: dict[str, tuple[Any, int]] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            raise RulesFileError(value.lineno, f"{what} uses `**` unpacking", "write the keys out")
        name = _literal(key, what)
        if not isinstance(name, str):
            raise RulesFileError(
                key.lineno, f"{what} has a key that is not a string ({name!r})", f"write {example}"
            )
        if name in out:
            raise RulesFileError(key.lineno, f"{what} repeats the key `{name}`", "keep one")
        out[name] = (_literal(value, what), value.lineno)
    return out


def _text(value: Any, line: int, what: str, one_line: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RulesFileError(line, f"{what} must be a non-empty string", "write it in quotes")
    text = value.strip()
    if one_line and ("\n" in text or "\r" in text):
        raise RulesFileError(
            line, f"{what} spans several lines", "keep it to one line; put details in `rule`"
        )
    # The text is the repository's: it may not drive the terminal, and none of its lines
    # may pass for one of Karni's (docs/security.md).

    if one_line:
        return clean_field(text)
    return "\n".join(neutralise(clean_line(part)) for part in text.splitlines())


def _choice(value: Any, line: int, what: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(f'"{choice}"' for choice in choices)
        raise RulesFileError(line, f"{what} is {value!r}", f"use one of {listed}")
    return value


def _is_project_code(code: str) -> bool:
    letters = code[:-3]
    digits = code[-3:]
    return (
        1 <= len(letters) <= 3
        and all("A" <= char <= "Z" for char in letters)
        and len(digits) == 3
        and all("0" <= char <= "9" for char in digits)
    )


def _parse_add(node: ast.expr) -> tuple[Rule, ...]:
    example = '[{"code": "P001", "rule": "..."}]'
    rules: list[Rule] = []
    first_line: dict[str, int] = {}
    for number, element in enumerate(_elements(node, "ADD", f"ADD = {example}"), 1):
        what = f"ADD entry {number}"
        fields = _add_fields(element, what)
        code, code_line = _add_code(fields, what)
        if code in first_line:
            raise RulesFileError(
                code_line,
                f"{what} reuses code `{code}` (first on line {first_line[code]})",
                "give each rule its own code",
            )
        first_line[code] = code_line
        rules.append(_add_rule(code, fields))
    return tuple(rules)


def _add_fields(element: ast.expr, what: str) -> dict[str, tuple[Any, int]]:
    """One ADD entry's fields; unknown keys and a missing ``code`` or ``rule`` are errors."""
    fields = _fields(element, what, '{"code": "P001", "rule": "..."}')
    for name, (_, line) in fields.items():
        if name not in _ADD_FIELDS:
            raise RulesFileError(
                line, f"{what} has an unknown key `{name}`", f"use only {', '.join(_ADD_FIELDS)}"
            )
    for required in ("code", "rule"):
        if required not in fields:
            raise RulesFileError(
                element.lineno,
                f"{what} has no `{required}`",
                f'add "{required}": ' + ('"P001"' if required == "code" else '"..."'),
            )
    return fields


def _add_code(fields: dict[str, tuple[Any, int]], what: str) -> tuple[str, int]:
    """The entry's code and its line: a project code, never one of Karni's (K…)."""
    code_value, code_line = fields["code"]
    code = _text(code_value, code_line, f"{what}'s `code`", one_line=True)
    if code.startswith("K"):
        raise RulesFileError(
            code_line,
            f"{what}'s code `{code}` starts with K, which is kept for Karni's rules",
            "use another letter, e.g. P001; to change a Karni rule use OVERRIDE",
        )
    if not _is_project_code(code):
        raise RulesFileError(
            code_line,
            f"{what}'s code `{code}` is not 1-3 capital letters and 3 digits",
            "use a code like P001",
        )
    return code, code_line


def _add_summary(code: str, fields: dict[str, tuple[Any, int]], rule_text: str) -> str:
    """The one-line summary: given, or the rule itself when that is one short line."""
    if "summary" in fields:
        summary = _text(*fields["summary"], f"{code}'s `summary`", one_line=True)
        summary_line = fields["summary"][1]
    else:
        summary, summary_line = rule_text, fields["rule"][1]
        if "\n" in summary or "\r" in summary:
            raise RulesFileError(
                summary_line,
                f"{code}'s `rule` spans several lines, so it cannot be the summary",
                'add a one-line "summary"',
            )
    if len(summary) > _MAX_SUMMARY:
        raise RulesFileError(
            summary_line,
            f"{code}'s summary is {len(summary)} characters long (at most {_MAX_SUMMARY})",
            'add a shorter "summary" and keep the detail in "rule"',
        )
    return summary


def _add_rule(code: str, fields: dict[str, tuple[Any, int]]) -> Rule:
    """The project rule an ADD entry describes, with the defaults filled in."""
    rule_text = _text(*fields["rule"], f"{code}'s `rule`")
    summary = _add_summary(code, fields, rule_text)
    category = "project"
    if "category" in fields:
        category = _choice(*fields["category"], f"{code}'s `category`", CATEGORIES)
    severity = "must"
    if "severity" in fields:
        severity = _choice(*fields["severity"], f"{code}'s `severity`", SEVERITIES)
    rationale = (
        _text(*fields["rationale"], f"{code}'s `rationale`") if "rationale" in fields else None
    )
    fix = _text(*fields["fix"], f"{code}'s `fix`") if "fix" in fields else None
    return Rule(
        code, category, severity, summary, rule_text, rationale, fix, source=RULES_FILE_NAME
    )


def _known_karni_code(value: Any, line: int, what: str, fix: str) -> str:
    if not isinstance(value, str) or karni_rule(value) is None:
        shown = f"`{value}`" if isinstance(value, str) else repr(value)
        raise RulesFileError(line, f"{what} names {shown}, which is not a Karni rule", fix)
    return value


def _parse_override(node: ast.expr) -> dict[str, dict[str, str]]:
    example = '{"K004": {"severity": "should"}}'
    fix = "use a code from `karni rules --json`, e.g. K004; project rules are edited in ADD"
    out: dict[str, dict[str, str]] = {}
    for code, (changes, line) in _fields(node, "OVERRIDE", f"OVERRIDE = {example}").items():
        _known_karni_code(code, line, "OVERRIDE", fix)
        if not isinstance(changes, dict) or not changes:
            raise RulesFileError(
                line,
                f"OVERRIDE of {code} must be a non-empty dict",
                f'write "{code}": {{"severity": "should"}}',
            )
        fields: dict[str, str] = {}
        for name, value in changes.items():
            if name not in _OVERRIDE_FIELDS:
                raise RulesFileError(
                    line,
                    f"OVERRIDE of {code} has an unknown key `{name}`",
                    f"use only {', '.join(_OVERRIDE_FIELDS)}",
                )
            if name == "severity":
                fields[name] = _choice(value, line, f"OVERRIDE of {code}'s severity", SEVERITIES)
            else:
                fields[name] = _text(
                    value, line, f"OVERRIDE of {code}'s `{name}`", name == "summary"
                )
        out[code] = fields
    return out


def _parse_disable(node: ast.expr) -> frozenset[str]:
    codes = set()
    for element in _elements(node, "DISABLE", 'DISABLE = ["K008"]'):
        code = _literal(element, "DISABLE")
        fix = "use a Karni code (K001...); to drop a project rule, delete its ADD entry"
        codes.add(_known_karni_code(code, element.lineno, "DISABLE", fix))
    return frozenset(codes)


def _parse_adapters(node: ast.expr) -> dict[str, str | None]:
    defaults = {adapter.name: adapter.path for adapter in ADAPTERS}
    names = ", ".join(defaults)
    example = 'ADAPTERS = {"aider": False, "claude": "docs/CLAUDE.md"}'
    settings = _fields(node, "ADAPTERS", example)
    out: dict[str, str | None] = {}
    for name, (value, line) in settings.items():
        if name not in defaults:
            raise RulesFileError(line, f"ADAPTERS names unknown adapter `{name}`", f"use {names}")
        if value is True:
            out[name] = defaults[name]
        elif value is False:
            out[name] = None
        elif isinstance(value, str):
            out[name] = _adapter_path(value, line, name)
        else:
            raise RulesFileError(
                line,
                f"ADAPTERS[{name!r}] is {value!r}",
                "use False to switch it off, True for its default place, or a relative path",
            )
    taken: dict[str, str] = {}
    for name, default in defaults.items():
        path = out.get(name, default)
        if path is None:
            continue
        if path.lower() in taken:
            both = (name, taken[path.lower()])
            line = max(settings[other][1] for other in both if other in settings)
            raise RulesFileError(
                line,
                f"adapters `{taken[path.lower()]}` and `{name}` would both be written to {path}",
                "give each adapter its own path, or switch one off",
            )
        taken[path.lower()] = name
    return out


def _adapter_path(value: str, line: int, name: str) -> str:
    parts = value.split("/")
    problem = None
    if not value.strip():
        problem = "is empty"
    elif "\\" in value or value.startswith("/") or (len(value) > 1 and value[1] == ":"):
        problem = "is not a relative POSIX path"
    elif any(part in ("", ".", "..") for part in parts):
        problem = "has an empty, `.` or `..` part"
    elif parts[0] == ".karni" or value == RULES_FILE_NAME or parts[0] == ".git":
        problem = "points at a file Karni or git owns"
    elif any(ord(char) < 32 for char in value):
        problem = "contains a control character"
    if problem:
        raise RulesFileError(
            line,
            f"the path {value!r} for adapter `{name}` {problem}",
            'use a project-relative path such as "docs/AGENTS.md"',
        )
    return value
