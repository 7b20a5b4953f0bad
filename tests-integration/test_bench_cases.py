"""``scripts/bench`` builds every row it times, without timing any.

The bench runs by hand and is not part of ``scripts/test``; a merge once left
two of its row lists run together (a ``TypeError`` the moment the bench
started) and nothing noticed. Building the rows is cheap: no wheel is
installed and no command runs until a row is timed.
"""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_row_is_built_and_named_once(tmp_path: Path) -> None:
    bench = runpy.run_path(str(ROOT / "scripts" / "bench"), run_name="bench_rows")
    venv = tmp_path / "venv" / "bin"
    rows = bench["Bench"](venv / "python", venv / "karni", tmp_path, False)
    cases = [case for factory in bench["CASE_FACTORIES"] for case in factory(rows)]
    names = [case.name for case in cases]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert all(isinstance(case, bench["Case"]) for case in cases)
    targets = [case.name for case in cases if case.budget is not None]
    assert any("shared sessions in the tree" in name for name in targets)
    assert any(name.startswith("karni-historian search") for name in names)
