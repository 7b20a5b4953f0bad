"""``status`` and ``status --json``: the chain with origins, triggers, last run, failures."""

import json

import pytest
from conftest import write_session
from fake_model import Error, Reply, covering_xml
from karni_historian.cli import main


@pytest.fixture
def project(model_project):
    write_session(model_project, 1, 16, lambda ordinal: f"Message {ordinal}")
    return model_project


def status_json(project, capsys):
    assert main(["--project", str(project), "status", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def configure(tmp_path, project, server):
    user = tmp_path / "xdg" / "karni"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(
        f'[historian.claude_code]\nmodel = {{model = "anthropic/claude-test", '
        f'base_url = "{server.url}"}}\n'
        f'fallback_models = [{{model = "openai/gpt-test", base_url = "{server.url}/v1"}}]\n'
    )
    (project / ".karni" / "config.toml").write_text("[historian.claude_code]\ntwo_pass = false\n")


def test_status_json_before_any_run(project, capsys):
    data = status_json(project, capsys)
    assert data["schema"] == 1
    assert data["session"] == {
        "id": "s",
        "source": "claude-code",
        "title": None,
        "model": None,
        "shared": False,
        "author": None,
    }
    assert data["messages"] == {"raw": 16, "condensed_to": 0, "uncondensed": 16}
    assert data["chain"]["harness"] == "claude_code"
    assert data["chain"]["models"] == [
        {
            "model": "local/extractive",
            "origin": "default",
            "context_window": 128000,
            "endpoint": None,
            "key_variable": None,
            "key_set": False,
            "max_tokens": 8000,
            "temperature": None,
            "timeout": 300.0,
            "reasoning": None,
        }
    ]
    assert data["chain"]["two_pass"] == {"value": False, "origin": "default"}
    assert data["last_run"] is None
    assert data["failures"] == {"streak": 0, "last_error": None, "latest_dump": None}
    assert data["trigger"]["settled"] is True
    assert data["trigger"]["fire"] is False


def test_status_verbose_shows_the_whole_chain(tmp_path, project, server, capsys, monkeypatch):
    configure(tmp_path, project, server)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["--project", str(project), "status"]) == 0
    plain = capsys.readouterr().out
    assert main(["--project", str(project), "-v", "status"]) == 0
    verbose = capsys.readouterr().out
    assert "endpoint" not in plain
    lines = verbose.splitlines()
    assert "- Session model (from the transcript): none recorded" in lines
    assert (
        f"  1. anthropic/claude-test (user): endpoint {server.url}, key $ANTHROPIC_API_KEY set,"
        " context window 128000, max_tokens 8000, temperature default, timeout 300 s"
    ) in lines
    assert (
        f"  2. openai/gpt-test (user): endpoint {server.url}/v1, key $OPENAI_API_KEY not set,"
        " context window 128000, max_tokens 8000, temperature default, timeout 300 s"
    ) in lines
    assert (
        "- Chain settings: fallback_models from user, model from user, two_pass from project"
    ) in lines
    assert not any("sk-" in line for line in lines)


def test_quiet_and_verbose_together_is_a_usage_error(project, capsys):
    assert main(["--project", str(project), "-q", "-v", "status"]) == 2
    assert capsys.readouterr().err == (
        "karni-historian: -q and -v ask for less and for more; pass one of them\n"
    )


def test_status_names_where_each_setting_came_from(tmp_path, project, server, capsys):
    configure(tmp_path, project, server)
    chain = status_json(project, capsys)["chain"]
    assert [(m["model"], m["origin"]) for m in chain["models"]] == [
        ("anthropic/claude-test", "user"),
        ("openai/gpt-test", "user"),
    ]
    assert chain["two_pass"] == {"value": False, "origin": "project"}
    assert main(["--project", str(project), "status"]) == 0
    out = capsys.readouterr().out
    assert "- Chain (claude_code): anthropic/claude-test (user), then openai/gpt-test (user)" in out
    assert "- two_pass: off (project)" in out
    assert "- Trigger: none fires (" in out
    assert "- Last run: none yet" in out


def test_status_reports_the_last_run_and_the_failure_streak(tmp_path, project, server, capsys):
    configure(tmp_path, project, server)
    server.queue(Error(400), Error(400))
    assert main(["--project", str(project), "wrapup", "2"]) == 1
    capsys.readouterr()
    data = status_json(project, capsys)
    run = data["last_run"]
    assert (run["model"], run["kind"], run["outcome"]) == (
        "anthropic/claude-test",
        "wrapup",
        "failed",
    )
    assert isinstance(run["duration_ms"], int) and run["duration_ms"] >= 0
    assert "exhausted" in run["error"]
    failures = data["failures"]
    assert failures["streak"] == 1
    assert "/.karni/local/historian-dumps/" in failures["latest_dump"]
    assert failures["latest_dump"] in failures["last_error"]
    server.queue(Reply(covering_xml))
    code = main(["--project", str(project), "wrapup", "2"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    data = status_json(project, capsys)
    assert (data["last_run"]["model"], data["last_run"]["outcome"]) == (
        "anthropic/claude-test",
        "ok",
    )
    assert data["failures"]["streak"] == 0
    assert data["messages"]["condensed_to"] == 14
    assert main(["--project", str(project), "status"]) == 0
    assert "- Last run: wrapup with anthropic/claude-test: ok in " in capsys.readouterr().out
