"""Inside every package, imports run one way: no module imports itself through others.

The circles are found by :mod:`karni_it.cycles` (grimp's graph, imports inside
functions and under ``TYPE_CHECKING`` included). The historian's circles that
issue 30's historian pass breaks are listed in ``PENDING``: the test fails on
any other circle, and on a listed one that no longer exists as listed, so the
list can only shrink. A copy of the sources with one planted import proves
that a new circle is seen and named.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from karni_it.cycles import import_circles

ROOT = Path(__file__).resolve().parents[1]

PENDING = {
    # Issue 30, historian pass: a backend registers itself or is looked up by name.
    frozenset(
        {
            "karni_historian.condense.models.anthropic_api",
            "karni_historian.condense.models.backends",
            "karni_historian.condense.models.claude_code",
            "karni_historian.condense.models.openai_api",
        }
    ),
    # Issue 30, historian pass: the readers' shared types move below the registry (the
    # Aider and Gemini CLI readers joined it, importing the report type the same way).
    frozenset(
        {
            "karni_historian.ingest",
            "karni_historian.ingest.aider",
            "karni_historian.ingest.claude_code",
            "karni_historian.ingest.claude_code_records",
            "karni_historian.ingest.gemini",
            "karni_historian.ingest.opencode",
            "karni_historian.ingest.registry",
        }
    ),
    # Issue 30, historian pass: compartments → database → staging → compartments.
    frozenset(
        {
            "karni_historian.store.compartments",
            "karni_historian.store.database",
            "karni_historian.store.staging",
        }
    ),
}
"""Circles left for issue 30's historian pass, each as the set of its modules."""


def test_no_package_imports_in_a_circle() -> None:
    circles = import_circles()
    new = [str(circle) for circle in circles if circle.modules not in PENDING]
    assert not new, "modules that import each other; make the imports run one way:\n" + "\n".join(
        new
    )
    found = {circle.modules for circle in circles}
    gone = [sorted(modules) for modules in PENDING if modules not in found]
    assert not gone, f"these circles are broken or have changed; update PENDING: {gone}"


# Runs the finder with the real packages' folders taken off sys.path, so only
# the copies are read (the editable installs add them back otherwise).
RUNNER = """
import sys
real = set(sys.argv[1].split(";"))
sys.path[:] = [entry for entry in sys.path if entry not in real]
from karni_it.cycles import import_circles
for circle in import_circles():
    print(circle)
"""


def test_a_planted_import_makes_a_circle_that_is_named(tmp_path: Path) -> None:
    for src in sorted(ROOT.glob("packages/*/src")):
        shutil.copytree(
            src, tmp_path / src.relative_to(ROOT), ignore=shutil.ignore_patterns("__pycache__")
        )
    target = tmp_path / "packages/karni-core/src/karni/agent/history/discovery.py"
    planted = "\n\ndef _leak():\n    from karni.agent.history import compose\n"
    target.write_text(target.read_text(encoding="utf-8") + planted, encoding="utf-8")
    sources = [str(src) for src in sorted(tmp_path.glob("packages/*/src"))]
    real = ";".join(str(src) for src in sorted(ROOT.glob("packages/*/src")))
    helpers = str(ROOT / "tests-integration")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*sources, helpers])}
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, real],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    loop = (
        "karni.agent.history.compose -> karni.agent.history.discovery -> "
        "karni.agent.history.compose"
    )
    assert f"{{karni.agent.history.compose, karni.agent.history.discovery}}, e.g. {loop}" in (
        result.stdout.splitlines()
    ), result.stdout
