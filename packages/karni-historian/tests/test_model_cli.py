"""``run``/``wrapup`` with a configured model, ``models check`` and ``status`` after failures."""

import json
import subprocess
import sys

import pytest
from conftest import write_user_config
from fake_model import Error, FakeModelServer, Reply, covering_xml
from karni_historian.cli import main
from karni_historian.model import TextPart
from karni_historian.store import Store, parts_to_json

KEY = "sk-ant-api03-" + "q" * 40


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / ".karni").mkdir(parents=True)
    (root / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with Store.open(root, create=True) as store, store.transaction():
        store.ensure_session("s", "claude-code")
        for ordinal in range(1, 17):
            role = "user" if ordinal % 2 else "assistant"
            store.write_message("s", ordinal, role, parts_to_json([TextPart(f"Message {ordinal}")]))
    return root


@pytest.fixture
def server():
    with FakeModelServer() as fake:
        yield fake


def configure(project, text):
    """The user's file: only it may say where a model entry sends the key (``base_url``)."""
    write_user_config(text)


def model_block(server, harness="claude_code", model="anthropic/claude-test", extra=""):
    return (
        f'[historian.{harness}]\nmodel = {{model = "{model}", base_url = "{server.url}"}}\n{extra}'
    )


def test_wrapup_uses_the_configured_model(project, server, capsys):
    configure(project, model_block(server))
    server.queue(Reply(covering_xml))
    assert main(["--project", str(project), "wrapup", "2"]) == 0
    out = capsys.readouterr().out
    assert out == (
        "session s: 1 new compartment(s), 1 fact(s); messages 1-14 condensed; "
        "the newest 2 stay raw\n"
    )
    assert server.requests[0]["body"]["model"] == "claude-test"


def test_failures_are_reported_and_status_never_says_not_run_yet(project, server, capsys):
    configure(project, model_block(server))
    server.queue(Error(400), Error(400), Error(400))
    for _ in range(3):
        assert main(["--project", str(project), "wrapup", "2"]) == 1
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("karni-historian: session s: the historian failed 3 times in a row;")
    assert "the historian chain anthropic/claude-test is exhausted" in last
    assert ".karni/local/historian-dumps/" in last
    assert KEY not in err
    assert main(["--project", str(project), "status"]) == 0
    status = capsys.readouterr().out
    assert "not run yet" not in status
    assert "- Historian: failing, no compartment yet" in status
    assert "- Historian failures in a row: 3" in status


def test_no_silent_switch_to_local_extractive(project, server, capsys):
    configure(project, model_block(server))
    server.queue(Error(401))
    assert main(["--project", str(project), "run"]) in (0, 1)
    assert main(["--project", str(project), "wrapup", "2"]) == 1
    with Store.open(project) as store:
        assert store.compartments("s") == []


def test_disable_stops_the_historian(project, server, capsys):
    configure(project, model_block(server))
    (project / ".karni" / "config.toml").write_text("[historian]\ndisable = true\n")
    assert main(["--project", str(project), "wrapup", "2"]) == 0
    assert capsys.readouterr().out == (
        "session s: the historian is disabled "
        "(`historian.disable = true` in the project's .karni/config.toml)\n"
    )
    assert server.requests == []


@pytest.mark.parametrize("command", [["wrapup", "2"], ["run"], ["models", "check"]])
@pytest.mark.parametrize(
    "entry",
    [
        'model = {{model = "anthropic/claude-test", base_url = "{url}"}}',
        'model = "anthropic/claude-test"\n'
        'fallback_models = [{{model = "openai/gpt-test", base_url = "{url}/v1"}}]',
        'model = {{model = "anthropic/claude-test", api_key_env = "STOLEN"}}',
    ],
)
def test_a_project_file_never_sends_the_users_key_anywhere(
    project, server, capsys, monkeypatch, command, entry
):
    monkeypatch.setenv("STOLEN", "ghp_" + "s" * 36)
    text = "[historian.claude_code]\n" + entry.format(url=server.url) + "\n"
    (project / ".karni" / "config.toml").write_text(text)
    assert main(["--project", str(project), *command]) == 1
    out, err = capsys.readouterr()
    assert server.requests == []
    assert "never by a project; move the whole entry there" in err and err.count("\n") == 1
    assert "karni-historian: configuration error: " in err and out == ""
    with Store.open(project) as store:
        assert store.compartments("s") == []


def test_a_configuration_error_is_one_line(project, capsys):
    configure(project, '[historian.pi]\nmodel = "anthropic/a"\nvariant = "high"\n')
    assert main(["--project", str(project), "wrapup", "2"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("karni-historian: configuration error: ")
    assert "config.toml: `historian.pi.variant` is not allowed: pi entries take" in err


def test_two_pass_editor_failure_is_noted(project, server, capsys):
    configure(project, model_block(server, extra="two_pass = true\n"))
    server.queue(Reply(covering_xml), Error(400))
    assert main(["--project", str(project), "wrapup", "2"]) == 0
    captured = capsys.readouterr()
    assert "1 new compartment(s)" in captured.out
    assert "note: the editor pass of anthropic/claude-test failed" in captured.err


def test_models_check_reports_each_entry(project, server, capsys):
    configure(
        project,
        model_block(server)
        + f'fallback_models = [{{model = "openai/gpt-test", base_url = "{server.url}/v1"}}]\n'
        + model_block(server, harness="pi"),
    )
    server.queue(Reply("OK"), Error(401))
    assert main(["--project", str(project), "models", "check"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ok   claude_code model      anthropic/claude-test: reachable"
    assert lines[1].startswith("FAIL claude_code fallback 1 openai/gpt-test: ")
    assert "`OPENAI_API_KEY` is not set" in lines[1]
    assert lines[2] == "ok   pi          model      anthropic/claude-test: reachable"
    assert len(server.requests) == 1  # the same model is called once
    assert server.requests[0]["body"]["messages"][0]["content"] == "Reply with the single word OK."
    assert server.requests[0]["body"]["max_tokens"] == 64


def test_models_check_without_models(project, capsys):
    assert main(["--project", str(project), "models", "check"]) == 0
    assert capsys.readouterr().out == (
        "no historian model is configured: every session uses local/extractive\n"
    )


def test_no_sdk_is_imported_unless_a_model_is_called(project):
    code = (
        "import sys\n"
        "from karni_historian.cli import main\n"
        f"main(['--project', {str(project)!r}, 'wrapup', '2'])\n"
        f"main(['--project', {str(project)!r}, 'render'])\n"
        "sdks = ('anthropic', 'openai', 'httpx')\n"
        "print(json.dumps(sorted(m for m in sdks if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_run_uses_the_configured_chain(project, server, capsys):
    configure(project, model_block(server) + 'fallback_models = ["ollama/qwen3"]\n')
    assert main(["--project", str(project), "run", "--dry-run", "--force"]) == 0
    assert capsys.readouterr().out == (
        "session s: would condense messages 1-6 with "
        "anthropic/claude-test → ollama/qwen3 (forced)\n"
    )
    assert server.requests == []
    server.queue(Reply(covering_xml))
    assert main(["--project", str(project), "run", "--force"]) == 0
    assert "messages 1-6 condensed" in capsys.readouterr().out
    assert len(server.requests) == 1


def test_wrapup_verbose_tells_each_chunk_and_model_call(project, server, capsys, monkeypatch):
    import re

    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "v" * 40)
    fallback = f'fallback_models = [{{model = "openai/gpt-test", base_url = "{server.url}/v1"}}]\n'
    configure(project, model_block(server, extra=fallback))
    server.queue(Error(400), Reply(covering_xml))
    assert main(["--project", str(project), "-v", "wrapup", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        "session s: 1 new compartment(s), 1 fact(s); messages 1-14 condensed; "
        "the newest 2 stay raw\n"
    )
    told = [line for line in captured.err.splitlines() if "pending" not in line]
    prefix = r"karni-historian: session s: "
    seconds = r"\d+\.\d\d s"
    patterns = [
        prefix + r"chunk messages 1-14: \d+ characters, 14 message\(s\)",
        prefix + r"model call anthropic/claude-test, attempt 1: failed \(.*400.*\) in " + seconds,
        prefix + r"model call openai/gpt-test, attempt 1: ok in " + seconds,
        prefix + r"chunk messages 1-14: answered by openai/gpt-test in " + seconds,
    ]
    assert len(told) == len(patterns), told
    for line, pattern in zip(told, patterns, strict=True):
        assert re.fullmatch(pattern, line), line
    assert KEY not in captured.err
    with Store.open(project) as store:
        assert store.last_run("s")["model"] == "openai/gpt-test"


def test_verbose_keeps_the_built_in_historians_parsed_answer(project, capsys, monkeypatch):
    # -v tells each chunk, and the built-in historian's compartments still reach the
    # validator without being written as XML and parsed back; what is published is the same.
    import shutil

    from karni_historian.condense import compartment_xml, extractive

    quiet = project.parent / "quiet"
    shutil.copytree(project, quiet)
    assert main(["--project", str(quiet), "run", "--force"]) == 0

    def no_xml(*args, **kwargs):
        raise AssertionError("the built-in historian's XML was written or parsed")

    monkeypatch.setattr(extractive, "summarize", no_xml)
    monkeypatch.setattr(compartment_xml, "parse", no_xml)
    capsys.readouterr()
    assert main(["--project", str(project), "-v", "run", "--force"]) == 0
    assert " answered by local/extractive in " in capsys.readouterr().err

    def published(root):
        with Store.open(root) as store:
            return [repr(stored.compartment) for stored in store.compartments("s")]

    assert published(project) == published(quiet) != []


def test_run_verbose_with_the_built_in_historian_tells_each_chunk(project, capsys):
    assert main(["--project", str(project), "-v", "run", "--force"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "chunk messages" in line]
    assert lines and lines[-1].startswith("karni-historian: session s: chunk messages ")
    assert " answered by local/extractive in " in lines[-1]
    with Store.open(project) as store:
        assert store.last_run("s")["model"] == "local/extractive"
    assert main(["--project", str(project), "-v", "recomp"]) == 0
    captured = capsys.readouterr()
    assert "compartment(s) published" in captured.out
    assert "karni-historian: session s: chunk messages 1-" in captured.err
    assert main(["--project", str(project), "-v", "expand", "1", "2"]) == 0
    assert capsys.readouterr().out.startswith("Messages 1-2 (verbose).")
