"""What an edit tool call changed: the text it replaced and wrote, and its line counts.

Every harness spells its edit tools differently (Claude Code's ``Edit`` with
``old_string``/``new_string``, Pi's ``edit`` with ``oldText``/``newText``,
OpenCode's ``oldString``/``newString``, ``apply_patch`` with a patch, a
``Write`` with the whole content …). Both the brief's line counts
(:mod:`karni_historian.brief.shaped`) and a file's notes
(:mod:`karni_historian.condense.file_notes`) read them here. The module
imports nothing: a brief runs before every edit.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = [
    "EDIT_TOOLS",
    "PATH_KEYS",
    "diff_counts",
    "edit_line_counts",
    "edited_text",
    "is_edit_tool",
    "named_path",
    "patch_paths",
]

REPLACE_TOOLS = frozenset({"edit", "multiedit", "str_replace_editor", "replace", "smart_edit"})
WRITE_TOOLS = frozenset({"write", "create", "write_file", "create_file"})
PATCH_TOOLS = frozenset({"apply_patch", "patch"})
NOTEBOOK_TOOLS = frozenset({"notebookedit"})
EDIT_TOOLS = REPLACE_TOOLS | WRITE_TOOLS | PATCH_TOOLS | NOTEBOOK_TOOLS
"""Tool names (lower case) that change a file."""

PATH_KEYS = ("file_path", "filePath", "notebook_path", "path")  # model.PATH_KEYS (a test checks)
_OLD_KEYS = ("old_string", "oldText", "oldString", "old_str")
_NEW_KEYS = ("new_string", "newText", "newString", "new_str")
_CONTENT_KEYS = ("content", "file_text")
_PATCH_KEYS = ("patchText", "patch", "input")
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")


def is_edit_tool(name: str) -> bool:
    """Whether a tool of this name changes a file."""
    return name.lower() in EDIT_TOOLS


def _text(data: dict[str, Any], keys: Sequence[str]) -> str | None:
    """The first of ``keys`` whose value is text."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, str):
            return value
    return None


def named_path(data: dict[str, Any]) -> str | None:
    """The file a tool input names under one of :data:`PATH_KEYS`."""
    return _text(data, PATH_KEYS)


def _replacements(data: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """The ``(old, new)`` text pairs of a replacing edit, one or many."""
    old, new = _text(data, _OLD_KEYS), _text(data, _NEW_KEYS)
    if old is not None or new is not None:
        yield old or "", new or ""
    edits = data.get("edits")
    for item in edits if isinstance(edits, list) else ():
        if isinstance(item, dict):
            yield _text(item, _OLD_KEYS) or "", _text(item, _NEW_KEYS) or ""


def patch_paths(patch: str) -> list[str]:
    """The files a patch names (``*** Update File: x`` headers, or ``+++ b/x`` lines)."""
    found = []
    for line in patch.splitlines():
        header = next((h for h in _PATCH_HEADERS if line.startswith(h)), None)
        if header is not None:
            found.append(line[len(header) :].strip())
        elif line.startswith("+++ ") and line[4:].strip() != "/dev/null":
            name = line[4:].strip()
            found.append(name[2:] if name.startswith(("a/", "b/")) else name)
    return found


def _same(candidate: str | None, path: str) -> bool:
    return bool(candidate) and (candidate == path or str(candidate).endswith("/" + path))


def _patch_sides(patch: str, path: str | None) -> tuple[list[str], list[str]]:
    """The ``-`` and ``+`` lines of ``patch`` about ``path`` (all of them when it names no file)."""
    removed: list[str] = []
    added: list[str] = []
    headed = any(header in patch for header in _PATCH_HEADERS)
    current: str | None = None
    for line in patch.splitlines():
        header = next((h for h in _PATCH_HEADERS if line.startswith(h)), None)
        if header is not None:
            current = line[len(header) :].strip()
            continue
        if line.startswith(("***", "+++", "---", "@@")):
            continue
        if headed and path is not None and not _same(current, path):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
    return removed, added


def edited_text(name: str, data: dict[str, Any], path: str | None = None) -> list[tuple[str, str]]:
    """The ``(replaced, written)`` text pairs of an edit call (about ``path`` for a patch).

    A write replaces nothing it names (``""``); a patch gives its ``-`` and
    ``+`` lines; a tool this module does not know gives nothing.
    """
    lowered = name.lower()
    if lowered in REPLACE_TOOLS:
        return list(_replacements(data))
    if lowered in WRITE_TOOLS:
        content = _text(data, _CONTENT_KEYS)
        return [("", content)] if content is not None else []
    if lowered in NOTEBOOK_TOOLS:
        source = _text(data, ("new_source",))
        return [("", source)] if source is not None else []
    if lowered in PATCH_TOOLS:
        patch = _text(data, _PATCH_KEYS)
        if not patch:
            return []
        removed, added = _patch_sides(patch, path)
        return [("\n".join(removed), "\n".join(added))]
    return []


def diff_counts(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed turning ``old`` into ``new``: the lines outside their LCS.

    The counts of a minimal line diff, as ``git diff --numstat`` gives them,
    computed here rather than with :mod:`difflib` (which imports :mod:`re`)
    on the path of every brief.
    """
    before, after = old.splitlines(), new.splitlines()
    kept = _common_lines(before, after)
    return len(after) - kept, len(before) - kept


LCS_CELLS = 250_000
"""Above this many line pairs between the common ends, every line there counts as changed.

That bounds an edit's cost on the brief's path (a replacement of two
500-line blocks that share neither end).
"""


def _common_lines(before: list[str], after: list[str]) -> int:
    """How many lines a longest common subsequence of ``before`` and ``after`` has."""
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    middle_before = before[head : len(before) - tail]
    middle_after = after[head : len(after) - tail]
    if not middle_before or not middle_after:
        return head + tail
    if len(middle_before) == 1 or len(middle_after) == 1:  # one line: kept if the other has it
        one, other = (
            (middle_before, middle_after)
            if len(middle_before) == 1
            else (middle_after, middle_before)
        )
        return head + tail + (1 if one[0] in other else 0)
    if len(middle_before) * len(middle_after) > LCS_CELLS:
        return head + tail
    return head + tail + _lcs_length(middle_before, middle_after)


def _lcs_length(before: list[str], after: list[str]) -> int:
    """The length of a longest common subsequence, one row of the table at a time."""
    previous = [0] * (len(after) + 1)
    for line in before:
        current = [0]
        for j, other in enumerate(after):
            current.append(previous[j] + 1 if line == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def edit_line_counts(name: str, data: Any, path: str) -> tuple[int, int]:
    """``(added, removed)`` lines of ``path`` worked out from an edit tool's input.

    Args:
        name: The tool's name.
        data: The tool's input, its paths already project-relative.
        path: The project-relative file the counts are for.

    Returns:
        The counts; ``(0, 0)`` for a tool whose input does not say.
    """
    if not isinstance(data, dict):
        return 0, 0
    lowered = name.lower()
    if lowered in PATCH_TOOLS:
        patch = _text(data, _PATCH_KEYS)
        removed, added = _patch_sides(patch, path) if patch else ([], [])
        return len(added), len(removed)
    pairs = edited_text(name, data, path)
    if lowered in REPLACE_TOOLS:
        counts = [diff_counts(old, new) for old, new in pairs]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)
    return sum(len(new.splitlines()) for _, new in pairs), 0
