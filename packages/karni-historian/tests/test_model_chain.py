"""The model-backed historian driven through the real SDKs against a loopback fake server."""

import json
import os
import stat

import pytest
from fake_model import Drop, Error, FakeModelServer, Hang, Reply, covering_xml
from karni_historian.condense import runner
from karni_historian.condense.models.chain import ModelHistorian
from karni_historian.condense.models.dumps import DUMP_FOLDER, KEEP_DUMPS, DumpFolder
from karni_historian.condense.models.entries import ModelEntry
from karni_historian.condense.models.redaction import MARKER, Redactor
from karni_historian.condense.models.session import prompt_context
from karni_historian.condense.models.settings import ResolvedChain
from karni_historian.model import TextPart, ToolPart
from karni_historian.store import Store, parts_to_json

KEY = "sk-ant-api03-" + "k" * 40
OPENAI_KEY = "sk-proj-" + "o" * 40


@pytest.fixture
def root(tmp_path, monkeypatch):
    (tmp_path / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with Store.open(tmp_path, create=True) as store, store.transaction():
        store.ensure_session("s", "claude-code")
        texts = [
            ("user", [TextPart("Rename total() to subtotal() in cart.py")]),
            ("assistant", [TextPart("Renamed it; the old key was " + KEY)]),
            ("user", [TextPart("Check the settings too")]),
            (
                "assistant",
                [ToolPart("Read", {"file_path": ".env"}, "     1→DB_PASSWORD=hunter2secret\n")],
            ),
            ("user", [TextPart("Thanks, that is all")]),
            ("assistant", [TextPart("Done.")]),
        ]
        for ordinal, (role, parts) in enumerate(texts, 1):
            store.write_message("s", ordinal, role, parts_to_json(parts))
    return tmp_path


@pytest.fixture
def server():
    with FakeModelServer() as fake:
        yield fake


def anthropic(server, name="claude-test", **settings):
    return ModelEntry(model_id=f"anthropic/{name}", base_url=server.url, **settings)


def openai(server, name="gpt-test", **settings):
    return ModelEntry(model_id=f"openai/{name}", base_url=server.url + "/v1", **settings)


def condense(root, entries, *, two_pass=False, sleeps=None):
    """wrapup 2 (the newest prompt and its answer stay raw) with ``entries``.

    Returns (outcome, historian, compartments, runs).
    """
    chain = ResolvedChain("claude_code", tuple(entries), two_pass=two_pass)
    redact = Redactor([KEY, OPENAI_KEY])
    pauses = sleeps if sleeps is not None else []
    with Store.open(root) as store:
        historian = ModelHistorian(
            chain,
            lambda: prompt_context(store, "s"),
            DumpFolder(str(root), redact),
            redact,
            sleep=pauses.append,
            jitter=lambda low, high: (low + high) / 2,
        )
        outcome = runner.wrapup(store, "s", 2, historian=historian)
        compartments = [c.compartment for c in store.compartments("s")]
        runs = store.connection.execute("SELECT historian FROM historian_runs").fetchall()
    return outcome, historian, compartments, runs


def dumps(root):
    folder = root / DUMP_FOLDER
    return sorted(folder.iterdir()) if folder.exists() else []


def test_valid_xml_through_the_anthropic_sdk(root, server):
    server.queue(Reply(covering_xml))
    outcome, historian, compartments, runs = condense(root, [anthropic(server)])
    assert outcome.status == "ok", outcome.error
    assert [(c.start, c.end, c.title) for c in compartments] == [(1, 4, "Episode 1-4")]
    assert historian.last_model == "anthropic/claude-test"
    (request,) = server.requests
    assert request["path"] == "/v1/messages"
    headers = request["headers"]
    assert KEY in (
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
    )
    assert request["body"]["model"] == "claude-test"
    assert runs == [("anthropic/claude-test",)]
    assert dumps(root) == []


def test_secrets_never_leave_the_machine(root, server):
    server.queue(Reply(covering_xml))
    condense(root, [anthropic(server)])
    sent = json.dumps(server.requests[0]["body"])
    assert KEY not in sent
    assert "hunter2secret" not in sent
    assert MARKER in sent


def test_valid_xml_through_the_openai_sdk(root, server):
    server.queue(Reply(covering_xml))
    outcome, _, compartments, _ = condense(root, [openai(server)])
    assert outcome.status == "ok", outcome.error
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {OPENAI_KEY}"
    assert [c.title for c in compartments] == ["Episode 1-4"]


def test_broken_xml_gets_one_repair_request(root, server):
    server.queue(Reply("<output><compartment start='1'"), Reply(covering_xml))
    outcome, _, _, _ = condense(root, [anthropic(server)])
    assert outcome.status == "ok", outcome.error
    repair = server.requests[1]["body"]["messages"][0]["content"]
    assert "Your previous XML response was invalid" in repair
    assert "Validation error: Historian returned no usable compartments." in repair
    assert repair.endswith("Previous invalid XML:\n<output><compartment start='1'")
    assert len(dumps(root)) == 1


def test_valid_xml_failing_validation_is_repaired(root, server):
    bad = covering_xml("Messages 1-4:").replace('start="1"', 'start="2"')
    server.queue(Reply(bad), Reply(covering_xml))
    outcome, _, _, _ = condense(root, [openai(server)])
    assert outcome.status == "ok", outcome.error
    repair = server.requests[1]["body"]["messages"][1]["content"]
    assert "Validation error: Historian returned invalid compartment output: gap before" in repair


def test_a_truncated_reply_is_repaired(root, server):
    server.queue(Reply(covering_xml, truncated=True), Reply(covering_xml))
    outcome, _, _, _ = condense(root, [anthropic(server, max_tokens=123)])
    assert outcome.status == "ok"
    repair = server.requests[1]["body"]["messages"][0]["content"]
    assert "the reply stopped at max_tokens (123)" in repair


@pytest.mark.parametrize("status", [429, 529, 500])
def test_transient_errors_retry_the_same_model_with_backoff(root, server, status):
    server.queue(Error(status), Error(status), Reply(covering_xml))
    sleeps = []
    outcome, _, _, _ = condense(root, [anthropic(server), openai(server)], sleeps=sleeps)
    assert outcome.status == "ok", outcome.error
    assert [r["path"] for r in server.requests] == ["/v1/messages"] * 3
    assert sleeps == [2.5, 7.0]  # the middle of 2-3 s, then of 6-8 s
    assert len(dumps(root)) == 2


def test_a_dropped_connection_is_transient(root, server):
    server.queue(Drop(), Reply(covering_xml))
    outcome, _, _, _ = condense(root, [openai(server)])
    assert outcome.status == "ok", outcome.error
    assert len(server.requests) == 2


def test_a_timeout_is_retried_then_the_next_model_runs(root, server):
    server.queue(Hang(), Hang(), Hang(), Reply(covering_xml))
    sleeps = []
    entries = [anthropic(server, timeout=0.3), openai(server)]
    outcome, historian, _, runs = condense(root, entries, sleeps=sleeps)
    assert outcome.status == "ok", outcome.error
    assert [r["path"] for r in server.requests] == ["/v1/messages"] * 3 + ["/v1/chat/completions"]
    assert len(sleeps) == 2
    assert historian.last_model == "openai/gpt-test"
    assert runs == [("openai/gpt-test",)]  # the run records the model that wrote it
    record = json.loads(dumps(root)[0].read_text())
    assert "no answer within 0.3 s (timeout)" in record["error"]


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (400, "HTTP 400: scripted error"),
        (401, "authentication failed (401); check the key in `ANTHROPIC_API_KEY`"),
        (404, "unknown model `claude-test`"),
    ],
)
def test_permanent_errors_move_to_the_next_model_at_once(root, server, status, words):
    server.queue(Error(status), Reply(covering_xml))
    sleeps = []
    outcome, historian, _, _ = condense(root, [anthropic(server), openai(server)], sleeps=sleeps)
    assert outcome.status == "ok", outcome.error
    assert [r["path"] for r in server.requests] == ["/v1/messages", "/v1/chat/completions"]
    assert sleeps == []
    assert historian.last_model == "openai/gpt-test"
    (dump,) = dumps(root)
    assert words in json.loads(dump.read_text())["error"]


def test_an_exhausted_chain_fails_the_run_and_names_the_dump(root, server):
    server.queue(Error(401, "bad key " + KEY), Error(400), Error(400))
    outcome, _, compartments, _ = condense(root, [anthropic(server), openai(server)])
    assert outcome.status == "failed"
    assert compartments == []
    assert outcome.error.startswith(
        "the historian chain anthropic/claude-test → openai/gpt-test is exhausted: openai/gpt-test"
    )
    newest = dumps(root)[-1]
    assert outcome.error.endswith(f"; details in {newest}")
    assert KEY not in outcome.error
    # never a silent switch: only the two configured models were asked
    assert len(server.requests) == 2


def test_dumps_are_owner_only_redacted_and_pruned(root, server):
    server.queue(*[Error(400, "rejected " + KEY)] * (KEEP_DUMPS + 2))
    for _ in range(KEEP_DUMPS + 2):
        condense(root, [anthropic(server)])
    files = dumps(root)
    assert len(files) == KEEP_DUMPS
    folder = root / DUMP_FOLDER
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        text = path.read_text()
        assert KEY not in text
        assert "hunter2secret" not in text
    record = json.loads(files[-1].read_text())
    assert record["model"] == "anthropic/claude-test"
    assert record["request"]["chunk"] == "1-4"
    assert json.loads(record["response"])["error"]["message"] == f"rejected {MARKER}"
    assert (root / ".karni" / "local" / ".gitignore").read_text() == "*\n"


def test_two_pass_runs_the_editor_and_keeps_its_output(root, server):
    edited = covering_xml("Messages 1-4:").replace("We worked.", "We renamed.")
    server.queue(Reply(covering_xml), Reply(edited))
    outcome, historian, compartments, _ = condense(root, [anthropic(server)], two_pass=True)
    assert outcome.status == "ok"
    editor = server.requests[1]["body"]
    assert editor["messages"][0]["content"].startswith("This is a historian draft.")
    assert editor["system"].startswith("You are the editor of a historian's draft.")
    assert compartments[0].p2 == "We renamed."
    assert historian.notes == []


def test_a_failed_editor_keeps_the_draft_and_notes_it(root, server):
    server.queue(Reply(covering_xml), Error(400), Error(400))
    outcome, historian, compartments, _ = condense(root, [anthropic(server)], two_pass=True)
    assert outcome.status == "ok"
    assert compartments[0].p2 == "We worked."
    assert len(server.requests) == 2  # the editor gets no fallback and no second try
    (note,) = historian.notes
    assert note.startswith("the editor pass of anthropic/claude-test failed")
    assert note.endswith("kept the first draft")


def test_a_missing_key_is_permanent_and_named(root, server, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    server.queue(Reply(covering_xml))
    outcome, _, _, _ = condense(root, [anthropic(server), openai(server)])
    assert outcome.status == "ok"
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"]
    assert "`ANTHROPIC_API_KEY` is not set" in json.loads(dumps(root)[0].read_text())["error"]


def test_a_missing_extra_is_one_line_naming_it(root, server, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    outcome, _, _, _ = condense(root, [openai(server)])
    assert outcome.status == "failed"
    assert "openai/gpt-test needs the openai SDK: install `karni-historian[openai]`" in (
        outcome.error
    )
    assert "\n" not in outcome.error


def test_an_openai_compatible_server_without_key(root, server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    server.queue(Reply(covering_xml))
    entry = ModelEntry(model_id="openai-compatible/llama", base_url=server.url + "/v1")
    outcome, _, _, _ = condense(root, [entry])
    assert outcome.status == "ok", outcome.error
    body = server.requests[0]["body"]
    assert body["max_tokens"] == 8000
    assert "max_completion_tokens" not in body


def test_the_prompt_names_earlier_compartments_and_memory(root, server):
    server.queue(Reply(covering_xml), Reply(covering_xml))
    condense(root, [anthropic(server)])
    with Store.open(root) as store, store.transaction():
        for ordinal in (7, 8, 9):
            role = "user" if ordinal % 2 else "assistant"
            store.write_message("s", ordinal, role, parts_to_json([TextPart(f"More {ordinal}")]))
    condense(root, [anthropic(server)])
    prompt = server.requests[1]["body"]["messages"][0]["content"]
    assert prompt.startswith(
        '<session_references>\n<compartment start="1" end="4" title="Episode 1-4"/>\n'
        "</session_references>\n\n<project-memory>\n* [CONSTRAINTS] Never log the API key.\n"
        "</project-memory>\n\n<new_messages>\nMessages 5-7:"
    )


def test_a_chunk_that_cannot_fit_the_window_fails_without_a_call(root, server):
    entry = anthropic(server, context_window=1_000, max_tokens=990)
    outcome, _, _, _ = condense(root, [entry])
    assert outcome.status == "failed"
    assert "do not fit its context window (1000 tokens with 990 for the reply)" in outcome.error
    assert server.requests == []


def test_dump_folder_failure_never_hides_the_model_error(root, server):
    (root / ".karni" / "local" / "historian-dumps").symlink_to(root)
    server.queue(Error(400))
    outcome, _, _, _ = condense(root, [anthropic(server)])
    assert outcome.status == "failed"
    assert "HTTP 400" in outcome.error
    assert "details in" not in outcome.error
    assert not any(name.endswith(".json") for name in os.listdir(root))


@pytest.mark.parametrize("target", ["missing", "existing"])
def test_the_dump_folders_gitignore_is_never_written_through_a_link(root, server, tmp_path, target):
    outside = tmp_path / "outside" / ".gitignore"
    outside.parent.mkdir()
    if target == "existing":
        outside.write_text("kept\n")
    ignore = root / ".karni" / "local" / ".gitignore"
    ignore.unlink(missing_ok=True)
    ignore.symlink_to(outside)
    server.queue(Error(400))
    outcome, _, _, _ = condense(root, [anthropic(server)])
    assert outcome.status == "failed" and "details in" in outcome.error  # the dump is written
    assert ignore.is_symlink()
    assert outside.read_text() == "kept\n" if target == "existing" else not outside.exists()
