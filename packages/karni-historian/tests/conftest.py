"""Fixtures shared by the tests that drive ``karni-historian`` commands in a project."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from karni_historian.cli import main

# The fake model server lives beside the tests (tests/fake_model/), not in the package.
sys.path.insert(0, os.path.dirname(__file__))


EXAMPLE_SESSION = Path(__file__).resolve().parents[3] / "examples" / "sessions"
"""The folder of the bundled example sessions (``scripts/demo`` installs them)."""
EXAMPLE_ID = "9c2f41d7-3b8e-4a6f-b1d0-5e7a2c9f8b34"
"""The id of the example's Claude Code session (``claude-code-soft-delete.jsonl``)."""


def install_example(root: Path, claude: Path) -> Path:
    """The example's Claude Code session, where Claude Code keeps it for ``root``; its folder."""
    from karni_historian.ingest.claude_code import project_key

    folder = claude / "projects" / project_key(str(root))
    folder.mkdir(parents=True, exist_ok=True)
    text = (EXAMPLE_SESSION / "claude-code-soft-delete.jsonl").read_text(encoding="utf-8")
    (folder / f"{EXAMPLE_ID}.jsonl").write_text(
        text.replace("__PROJECT__", str(root)), encoding="utf-8"
    )
    return folder


@pytest.fixture
def example(root, user_folders, historian):
    """The example session ingested and wrapped up (all but the newest message condensed)."""
    install_example(root, user_folders / "claude")
    assert historian("-q", "ingest")[0] == 0
    assert historian("-q", "wrapup", "1")[0] == 0
    return root


@pytest.fixture(autouse=True)
def _utc_unless_a_test_says_otherwise(monkeypatch):
    """Every test starts in UTC, whatever the machine's zone, and ends with the zone it had.

    Briefs show times and compartments carry dates in the local zone, and
    the tests' expected dates are written in UTC; a test of other zones sets
    its own with :func:`time_zone`.
    """
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def time_zone(monkeypatch):
    """``time_zone("Europe/Berlin")`` sets the process's local zone; the test's end restores it."""

    def use(name):
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def user_folders(tmp_path, monkeypatch):
    """Every folder a harness or Karni reads from the user, empty and under ``tmp_path``."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    monkeypatch.setenv("OMP_CODING_AGENT_DIR", str(tmp_path / "omp"))
    for variable in ("OPENCODE_DB", "OMP_PROFILE", "AIDER_CHAT_HISTORY_FILE"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A project folder (``manage.py``), the working directory, with an empty user config."""
    (tmp_path / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def configure():
    """Write the project's ``[historian]`` table."""

    def write(root, text):
        (root / ".karni").mkdir(exist_ok=True)
        (root / ".karni" / "config.toml").write_text(f"[historian]\n{text}\n")

    return write


@pytest.fixture
def historian(capsys):
    """Run ``karni-historian ARGS``; return the exit code, stdout and stderr."""

    def run(*args):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="session")
def long_session():
    """The module that writes a long Claude Code session (``long_session.py``)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "long_session", Path(__file__).with_name("long_session.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def model_project(tmp_path, monkeypatch):
    """An empty project (``manage.py``) with an empty user config and fake model keys."""
    project = tmp_path / "project"
    (project / ".karni").mkdir(parents=True)
    (project / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "q" * 40)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "z" * 40)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return project


@pytest.fixture
def server():
    """The scripted loopback model server (``tests/fake_model``)."""
    from fake_model import FakeModelServer

    with FakeModelServer() as fake:
        yield fake


def write_user_config(text):
    """Write the user's ``karni/config.toml`` (where a model's ``base_url`` may live)."""
    import os
    from pathlib import Path

    path = Path(os.environ["XDG_CONFIG_HOME"]) / "karni" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def write_session(project, first, last, text):
    """Store messages ``first``-``last`` of session ``s`` (odd ones the user's), ``text(n)``."""
    from karni_historian.model import TextPart
    from karni_historian.store import Store, parts_to_json

    with Store.open(project, create=True) as store, store.transaction():
        store.ensure_session("s", "claude-code")
        for ordinal in range(first, last + 1):
            role = "user" if ordinal % 2 else "assistant"
            store.write_message("s", ordinal, role, parts_to_json([TextPart(text(ordinal))]))


def add_memory(project, content, category="NOTES"):
    """Put one project-memory fact into the store, as the historian promotes one."""
    from karni_historian.store import Store

    with Store.open(project) as store, store.transaction():
        store.connection.execute(
            "INSERT INTO memories (category, content, normalized_hash, created_at, updated_at)"
            " VALUES (?, ?, ?, '', '')",
            (category, content, content),
        )


def store_at_version(project, version):
    """A new store at ``project`` with the schema of ``version``: an older release's store.

    Returns the open ``sqlite3`` connection, in autocommit mode, for the caller
    to fill and close.
    """
    import sqlite3

    from karni_historian.store import MIGRATIONS, db_path

    os.makedirs(os.path.dirname(db_path(project)), mode=0o700, exist_ok=True)
    connection = sqlite3.connect(db_path(project), isolation_level=None)
    for statements in MIGRATIONS[:version]:
        for statement in statements:
            connection.execute(statement)
    connection.execute(f"PRAGMA user_version = {version}")
    return connection
