"""No module over 600 lines and no function over 60, in every package's source.

A function's length is its body without the docstring: its signature and its
documentation do not count against it. Complexity has its own limit, ruff's
C901 at 15 (the root ``pyproject.toml``). The test fails naming each module
and function over a limit.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULE_LINES = 600
FUNCTION_LINES = 60


def oversized(path: str, text: str) -> dict[str, int]:
    """The module (by ``path``) and its functions (``path:name``) over a limit, with their lines."""
    found = {}
    lines = len(text.splitlines())
    if lines > MODULE_LINES:
        found[path] = lines
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if ast.get_docstring(node, clean=False) is not None and len(body) > 1:
                body = body[1:]
            length = (body[-1].end_lineno or 0) - body[0].lineno + 1
            if length > FUNCTION_LINES:
                found[f"{path}:{node.name}"] = length
    return found


def test_no_module_or_function_is_over_its_length() -> None:
    found: dict[str, int] = {}
    for source in sorted(ROOT.glob("packages/*/src/**/*.py")):
        path = source.relative_to(ROOT).as_posix()
        found.update(oversized(path, source.read_text(encoding="utf-8")))
    assert not found, (
        f"over {MODULE_LINES} lines a module or {FUNCTION_LINES} a function; "
        f"split them by concern: {found}"
    )


def test_the_measure_counts_a_function_body_without_its_docstring() -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(FUNCTION_LINES))
    documented = f'def f():\n    """Doc.\n\n    More.\n    """\n{body}'
    assert oversized("m.py", documented) == {}
    assert oversized("m.py", documented + "    return x0\n") == {"m.py:f": FUNCTION_LINES + 1}
    assert oversized("m.py", "x = 1\n" * (MODULE_LINES + 1)) == {"m.py": MODULE_LINES + 1}
