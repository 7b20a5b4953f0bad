"""An OpenCode session records its model, and an unconfigured historian inherits it.

The session is OpenCode's own store (the fixture rows written as its SQLite
database); the model server is the loopback fake, reached through the real
Anthropic SDK by ``ANTHROPIC_BASE_URL``.
"""

import json

import pytest
from fake_model import FakeModelServer, Reply, covering_xml
from karni_historian.cli import main
from karni_historian.store import Store
from test_ingest_harnesses import OC, install_opencode_db, opencode_rows

KEY = "sk-ant-api03-" + "s" * 40


@pytest.fixture
def project(tmp_path, monkeypatch, user_folders):
    root = tmp_path / "shop-project"
    (root / ".karni").mkdir(parents=True)
    (root / "manage.py").write_text("")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def server():
    with FakeModelServer() as fake:
        yield fake


def ingested(project, rows=None):
    install_opencode_db(project, rows if rows is not None else opencode_rows(project))
    assert main(["--project", str(project), "ingest"]) == 0
    with Store.open(project) as store:
        return store.session(OC)


def test_the_reader_records_the_sessions_model(project, capsys):
    assert ingested(project).model == "anthropic/claude-sonnet-4-5"


def test_the_newest_answer_of_the_session_itself_names_the_model(project):
    rows = opencode_rows(project)
    answers = [
        row
        for row in rows
        if row["table"] == "message"
        and row["session_id"] == OC
        and row["data"].get("role") == "assistant"
        and "completed" in row["data"]["time"]
    ]
    answers[-1]["data"].update(providerID="openai", modelID="gpt-5")
    child = next(r for r in rows if r["table"] == "message" and r["session_id"] != OC)
    child["data"].update(providerID="google", modelID="gemini-2.5-pro")
    assert ingested(project, rows).model == "openai/gpt-5"


def test_with_its_key_the_session_is_condensed_by_its_own_model(
    project, server, monkeypatch, capsys
):
    ingested(project)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.queue(Reply(covering_xml))
    assert main(["--project", str(project), "wrapup", "1"]) == 0
    assert [request["body"]["model"] for request in server.requests] == ["claude-sonnet-4-5"]
    with Store.open(project) as store:
        assert store.last_run(OC)["model"] == "anthropic/claude-sonnet-4-5"
    capsys.readouterr()
    assert main(["--project", str(project), "status", "--session", OC]) == 0
    status = capsys.readouterr().out
    assert "anthropic/claude-sonnet-4-5 (session)" in status
    assert main(["--project", str(project), "status", "--session", OC, "--json"]) == 0
    chain = json.loads(capsys.readouterr().out)["chain"]
    assert [(m["model"], m["origin"]) for m in chain["models"]] == [
        ("anthropic/claude-sonnet-4-5", "session")
    ]
    assert KEY not in status


def test_without_its_key_the_session_is_condensed_by_local_extractive(project, server, capsys):
    ingested(project)
    assert main(["--project", str(project), "wrapup", "1"]) == 0
    assert server.requests == []
    with Store.open(project) as store:
        assert store.last_run(OC)["model"] == "local/extractive"
    capsys.readouterr()
    assert main(["--project", str(project), "status", "--session", OC]) == 0
    status = capsys.readouterr().out
    assert "local/extractive (default)" in status
    assert "the session's model anthropic/claude-sonnet-4-5 has no `ANTHROPIC_API_KEY` set" in (
        status
    )
