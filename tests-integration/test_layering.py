"""The layering of docs/architecture.md is enforced: a forbidden import fails `lint-imports`.

Each case copies every package's source into a temporary folder, adds one
forbidden import (inside a function, where only a static analysis sees it),
and runs `lint-imports` with the repository's own contracts on the copy.
The clean copy passes, so each failure is the added import's doing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Runs import-linter with the real packages' folders taken off sys.path, so
# only the copies are analysed (the editable installs add them back otherwise).
RUNNER = """
import sys
real = set(sys.argv[1].split(";"))
sys.path[:] = [entry for entry in sys.path if entry not in real]
sys.argv[1:2] = []
from importlinter.cli import lint_imports_command
sys.exit(lint_imports_command())
"""

HISTORIAN_LAYERS = "karni-historian's layers, from cli down to the shared modules BROKEN"
HISTORIAN_STORE = "karni-historian's store: tables, then the database, then the schema BROKEN"
HISTORIAN_MODELS = "karni-historian's model calls: chain, backend by name, backends BROKEN"

VIOLATIONS = {
    "core imports the CLI": (
        "packages/karni-core/src/karni/agent/common/names.py",
        "def _leak():\n    import karni.cli.main\n",
        "karni-core imports only the standard library and itself BROKEN",
    ),
    "core imports a third-party package": (
        "packages/karni-core/src/karni/agent/history/cap.py",
        "def _leak():\n    import pytest\n",
        "karni-core imports only the standard library and itself BROKEN",
    ),
    "a provider imports another provider": (
        "packages/karni-history-adr/src/karni_history_adr/brief.py",
        "def _leak():\n    from karni.agent.history_chronicle import provider\n",
        "each provider stands alone BROKEN",
    ),
    "a provider imports the CLI": (
        "packages/karni-history-chronicle/src/karni/agent/history_chronicle/render.py",
        "def _leak():\n    from karni.cli import errors\n",
        "providers import at most karni-core: never the CLI or the testkit BROKEN",
    ),
    "the CLI imports a provider": (
        "packages/karni-cli/src/karni/cli/tip.py",
        "def _leak():\n    import karni_history_adr.provider\n",
        "karni-cli reaches providers only through karni-core BROKEN",
    ),
    "the testkit imports the CLI": (
        "packages/karni-provider-testkit/src/karni_provider_testkit/project.py",
        "def _leak():\n    from karni.cli import main\n",
        "the testkit imports only karni-core among Karni's packages BROKEN",
    ),
    "a rules module imports one above it": (
        "packages/karni-cli/src/karni/cli/rules/model.py",
        "def _leak():\n    from karni.cli.rules import file\n",
        "karni-cli's rules: each module imports only those below it BROKEN",
    ),
    "the rules parser imports the loader above it": (
        "packages/karni-cli/src/karni/cli/rules/parse.py",
        "def _leak():\n    from karni.cli.rules import file\n",
        "karni-cli's rules: each module imports only those below it BROKEN",
    ),
    "the rules cache imports the parser beside it": (
        "packages/karni-cli/src/karni/cli/rules/cache.py",
        "def _leak():\n    from karni.cli.rules import parse\n",
        "karni-cli's rules: each module imports only those below it BROKEN",
    ),
    "a common module of karni-core imports the history package": (
        "packages/karni-core/src/karni/agent/common/names.py",
        "def _leak():\n    from karni.agent.history import compose\n",
        "karni-core's common modules never import its history package BROKEN",
    ),
    "the historian's briefs import its cli": (
        "packages/karni-historian/src/karni_historian/brief/__init__.py",
        "def _leak():\n    from karni_historian import cli\n",
        HISTORIAN_LAYERS,
    ),
    "the historian's condensing imports its briefs": (
        "packages/karni-historian/src/karni_historian/condense/__init__.py",
        "def _leak():\n    from karni_historian.brief import render\n",
        HISTORIAN_LAYERS,
    ),
    "the historian's readers import its condensing beside them": (
        "packages/karni-historian/src/karni_historian/ingest/__init__.py",
        "def _leak():\n    from karni_historian.condense import runner\n",
        HISTORIAN_LAYERS,
    ),
    "the historian's store imports its readers": (
        "packages/karni-historian/src/karni_historian/store/__init__.py",
        "def _leak():\n    from karni_historian import ingest\n",
        HISTORIAN_LAYERS,
    ),
    "a shared historian module imports its store": (
        "packages/karni-historian/src/karni_historian/errors.py",
        "def _leak():\n    from karni_historian.store import database\n",
        HISTORIAN_LAYERS,
    ),
    "the historian's budgets import the settings' declarations": (
        "packages/karni-historian/src/karni_historian/budget.py",
        "def _leak():\n    from karni_historian import declared_settings\n",
        HISTORIAN_LAYERS,
    ),
    "the historian's errors import a shared module above them": (
        "packages/karni-historian/src/karni_historian/errors.py",
        "def _leak():\n    from karni_historian import model\n",
        HISTORIAN_LAYERS,
    ),
    "the historian's database imports a table group": (
        "packages/karni-historian/src/karni_historian/store/database.py",
        "def _leak():\n    from karni_historian.store import staging\n",
        HISTORIAN_STORE,
    ),
    "a model backend imports the lookup by name": (
        "packages/karni-historian/src/karni_historian/condense/models/anthropic_api.py",
        "def _leak():\n    from karni_historian.condense.models import backends\n",
        HISTORIAN_MODELS,
    ),
    "a model backend imports another backend": (
        "packages/karni-historian/src/karni_historian/condense/models/claude_code.py",
        "def _leak():\n    from karni_historian.condense.models import openai_api\n",
        HISTORIAN_MODELS,
    ),
}


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every package's src/ (Python files only), the contracts and their custom types."""
    copy = tmp_path_factory.mktemp("layering")
    for src in sorted(ROOT.glob("packages/*/src")):
        shutil.copytree(
            src,
            copy / src.relative_to(ROOT),
            ignore=lambda folder, names: [
                name
                for name in names
                if not name.endswith(".py") and not (Path(folder) / name).is_dir()
            ],
        )
    shutil.copytree(ROOT / "importlinter_contracts", copy / "importlinter_contracts")
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def lint(copy: Path) -> subprocess.CompletedProcess[str]:
    sources = [str(src) for src in sorted(copy.glob("packages/*/src"))]
    real = ";".join(str(src) for src in sorted(ROOT.glob("packages/*/src")))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), *sources])}
    return subprocess.run(
        [sys.executable, "-c", RUNNER, real, "--no-cache"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_clean_copy_keeps_every_contract(source_copy: Path) -> None:
    result = lint(source_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("case", sorted(VIOLATIONS))
def test_a_forbidden_import_breaks_its_contract(source_copy: Path, case: str) -> None:
    relative, addition, verdict = VIOLATIONS[case]
    target = source_copy / relative
    original = target.read_text(encoding="utf-8")
    target.write_text(original + "\n\n" + addition, encoding="utf-8")
    try:
        result = lint(source_copy)
    finally:
        target.write_text(original, encoding="utf-8")
    assert result.returncode == 1, result.stdout + result.stderr
    assert verdict in result.stdout, result.stdout
