"""The double against chronicle-contract.md: payloads, templates, exit codes, walk-up."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from karni_provider_testkit.fake_chronicle import NOT_A_PROJECT

CONTRACT = json.loads(
    (
        Path(__file__).parents[1]
        / "src"
        / "karni_provider_testkit"
        / "fake_chronicle"
        / "contract.json"
    ).read_text(encoding="utf-8")
)


def run(fake_chronicle, *arguments, cwd):
    result = fake_chronicle.run(*arguments, cwd=cwd)
    return result.returncode, result.stdout.decode("utf-8"), result.stderr.decode("utf-8")


@pytest.fixture
def repo(fake_chronicle, tmp_path):
    root = fake_chronicle.example_store(tmp_path / "repo").root
    (root / "src" / "session").mkdir(parents=True)
    (root / "src" / "api").mkdir()
    return root


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("context-empty", ["context", "src/session/cache.ts", "--json", "--limit", "5"]),
        ("context-empty", ["--json", "context", "src/session/cache.ts", "--limit", "5"]),
        ("context-project-memory", ["context", "src/session/store.ts", "--json", "--limit", "5"]),
        ("context-project-memory", ["--json", "context", "src/session/store.ts", "--limit=5"]),
        ("context-knowledge-fallback", ["context", "src/api/client.py", "--json", "--limit", "5"]),
        ("context-knowledge-fallback", ["context", "--limit", "5", "src/api/client.py", "--json"]),
        ("knowledge-decisions", ["knowledge", "--type", "decision", "--json"]),
        ("knowledge-decisions", ["--json", "knowledge", "--type=decision"]),
        ("knowledge-all", ["knowledge", "--json"]),
    ],
)
def test_the_contract_examples_byte_for_byte(fake_chronicle, repo, name, arguments):
    assert run(fake_chronicle, *arguments, cwd=repo) == (0, CONTRACT[name] + "\n", "")


def test_the_json_line_is_compact_raw_utf8_with_keys_in_order(fake_chronicle, repo):
    code, stdout, _ = run(
        fake_chronicle, "context", "src/session/store.ts", "--json", "--limit", "5", cwd=repo
    )
    assert code == 0
    assert stdout.count("\n") == 1 and stdout.endswith("\n")
    assert "\\u" not in stdout and "−" in stdout and "—" in stdout and "…" in stdout
    reply = json.loads(stdout)
    assert list(reply) == [
        "apiVersion",
        "command",
        "file",
        "empty",
        "prompts",
        "knowledge",
        "markdown",
    ]
    assert list(reply["prompts"][0]) == ["eventId", "ts", "session", "text", "churn"]
    assert list(reply["knowledge"][0]) == [
        "kind",
        "text",
        "eventId",
        "session",
        "ts",
        "role",
        "confidence",
    ]
    knowledge = json.loads(run(fake_chronicle, "knowledge", "--json", cwd=repo)[1])
    assert list(knowledge) == ["apiVersion", "command", "count", "items"]


def test_human_context_prints_the_markdown_exactly(fake_chronicle, repo):
    code, stdout, stderr = run(
        fake_chronicle, "context", "src/session/store.ts", "--limit", "5", cwd=repo
    )
    expected = json.loads(CONTRACT["context-project-memory"])["markdown"]
    assert (code, stdout, stderr) == (0, expected, "")


def test_no_store_anywhere_up_is_exit_3(fake_chronicle, tmp_path):
    for arguments in (
        ["context", "a.py", "--json"],
        ["knowledge", "--json"],
        ["knowledge", "--type", "idea", "--json"],
    ):
        assert run(fake_chronicle, *arguments, cwd=tmp_path) == (3, "", NOT_A_PROJECT + "\n")


def test_the_walk_up_finds_the_nearest_store_from_the_working_directory(fake_chronicle, repo):
    nested = fake_chronicle.create_store(repo / "src" / "api")
    nested.add_session()
    nested.add_prompt("Nested store prompt", {"client.py": (1, 0)})
    code, stdout, _ = run(
        fake_chronicle, "context", "client.py", "--json", cwd=repo / "src" / "api"
    )
    assert code == 0
    assert json.loads(stdout)["prompts"][0]["text"] == "Nested store prompt"
    code, stdout, _ = run(fake_chronicle, "context", "session/store.ts", "--json", cwd=repo / "src")
    assert json.loads(stdout)["file"] == "src/session/store.ts"


def test_a_dangling_symlink_does_not_count_but_a_plain_file_does(fake_chronicle, repo):
    inner = repo / "inner"
    inner.mkdir()
    (inner / ".chronicle").symlink_to(repo / "missing")
    code, stdout, _ = run(fake_chronicle, "context", "../src/api/client.py", "--json", cwd=inner)
    assert code == 0 and json.loads(stdout)["file"] == "src/api/client.py"
    (inner / ".chronicle").unlink()
    (inner / ".chronicle").write_text("")
    code, stdout, stderr = run(fake_chronicle, "context", "x.py", "--json", cwd=inner)
    local = inner / ".chronicle" / ".local"
    assert (code, stdout, stderr) == (1, "", f"ENOTDIR: not a directory, mkdir '{local}'\n")


@pytest.mark.parametrize(
    ("typed", "file"),
    [
        ("./src//session/store.ts", "src/session/store.ts"),
        ("src/../src/session/./store.ts", "src/session/store.ts"),
        ("src/session/", "src/session"),
        ("README.md", "README.md"),
        ("src/../README.md", "README.md"),
    ],
)
def test_the_file_is_normalised(fake_chronicle, repo, typed, file):
    code, stdout, _ = run(fake_chronicle, "context", typed, "--json", cwd=repo)
    assert code == 0
    assert json.loads(stdout)["file"] == file


def test_an_absolute_path_is_accepted(fake_chronicle, repo):
    absolute = str(repo / "src" / "session" / "store.ts")
    code, stdout, _ = run(
        fake_chronicle, "context", absolute, "--json", "--limit", "5", cwd=repo / "src"
    )
    assert (code, stdout) == (0, CONTRACT["context-project-memory"] + "\n")


@pytest.mark.parametrize("typed", [".", "", "..", "../elsewhere.py", "/etc/passwd", "src/../.."])
def test_a_path_outside_the_repository_or_the_root_itself_is_exit_2(fake_chronicle, repo, typed):
    assert run(fake_chronicle, "context", typed, "--json", cwd=repo) == (
        2,
        "",
        f'context: "{typed}" is outside this repository\n',
    )


@pytest.mark.parametrize("limit", ["0", "-1", "abc", "2.5", "", "Infinity", "1e400", "5x"])
def test_a_bad_limit_is_exit_2(fake_chronicle, repo, limit):
    assert run(fake_chronicle, "context", "a.py", "--json", "--limit", limit, cwd=repo) == (
        2,
        "",
        f'context: --limit must be a positive integer, got "{limit}"\n',
    )


@pytest.mark.parametrize("limit", ["5", "5.0", " 5 ", "0x5", "5e0", "+5"])
def test_limits_javascript_reads_as_five(fake_chronicle, repo, limit):
    code, stdout, _ = run(
        fake_chronicle, "context", "src/session/store.ts", "--json", "--limit", limit, cwd=repo
    )
    assert (code, stdout) == (0, CONTRACT["context-project-memory"] + "\n")


def test_the_path_is_checked_before_the_limit(fake_chronicle, repo):
    assert run(fake_chronicle, "context", "..", "--limit", "0", cwd=repo)[2] == (
        'context: ".." is outside this repository\n'
    )


def test_a_bad_knowledge_type_is_exit_2(fake_chronicle, repo):
    assert run(fake_chronicle, "knowledge", "--type", "idea", "--json", cwd=repo) == (
        2,
        "",
        'knowledge: --type must be "decision" or "todo", got "idea"\n',
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["context", "--json"], "error: missing required argument 'file'"),
        (["context", "a.py", "--foo"], "error: unknown option '--foo'"),
        (["--foo", "context", "a.py"], "error: unknown option '--foo'"),
        (["context", "a.py", "--limit"], "error: option '--limit <n>' argument missing"),
        (["context", "a.py", "--limit", "--json"], "error: option '--limit <n>' argument missing"),
        (["knowledge", "--type"], "error: option '--type <kind>' argument missing"),
        (["frobnicate"], "error: unknown command 'frobnicate'"),
        (["frobnicate", "--foo"], "error: unknown command 'frobnicate'"),
        (["--json"], "error: missing command (usage: chronicle [options] [command])"),
        (
            ["context", "a.py", "b.py"],
            "error: too many arguments for 'context'. Expected 1 argument but got 2.",
        ),
        (
            ["knowledge", "extra"],
            "error: too many arguments for 'knowledge'. Expected 0 arguments but got 1.",
        ),
    ],
)
def test_commander_usage_errors_come_first_even_outside_a_project(
    fake_chronicle, tmp_path, arguments, message
):
    assert run(fake_chronicle, *arguments, cwd=tmp_path) == (2, "", message + "\n")


def test_options_after_double_dash_are_operands(fake_chronicle, repo):
    (repo / "--json").write_text("")
    code, stdout, _ = run(fake_chronicle, "--json", "context", "--", "--json", cwd=repo)
    assert code == 0
    assert json.loads(stdout)["file"] == "--json"


def test_version_and_help(fake_chronicle, tmp_path):
    assert run(fake_chronicle, "--version", cwd=tmp_path) == (0, "0.2.0\n", "")
    code, stdout, _ = run(fake_chronicle, "--help", cwd=tmp_path)
    assert code == 0 and stdout.startswith("Usage: chronicle [options] [command]\n")
    code, stdout, _ = run(fake_chronicle, "context", "--help", cwd=tmp_path)
    assert code == 0 and stdout.startswith("Usage: chronicle context [options] <file>\n")


def test_unknown_and_nonexistent_paths_are_an_empty_pack(fake_chronicle, repo):
    for typed in ("no/such/file.py", "src/session/cache.ts"):
        code, stdout, _ = run(fake_chronicle, "context", typed, "--json", cwd=repo)
        reply = json.loads(stdout)
        assert code == 0
        assert (reply["empty"], reply["prompts"], reply["knowledge"]) == (True, [], [])
        assert reply["markdown"] == (
            f"# Context for {typed}\n\n"
            "_No captured history shaped this file yet — nothing to brief. Chronicle can only\n"
            "assemble context for work done while capture was running._\n"
        )


def test_a_bare_store_is_valid_and_empty(fake_chronicle, tmp_path):
    (tmp_path / ".chronicle").mkdir()
    assert run(fake_chronicle, "knowledge", "--json", cwd=tmp_path) == (
        0,
        '{"apiVersion":1,"command":"knowledge","count":0,"items":[]}\n',
        "",
    )
    code, stdout, _ = run(fake_chronicle, "context", "a.py", "--json", cwd=tmp_path)
    assert (code, json.loads(stdout)["empty"]) == (0, True)


def test_an_unreadable_fixture_is_exit_1(fake_chronicle, tmp_path):
    store = fake_chronicle.create_store(tmp_path)
    store.fixture_path.write_text("{not json")
    code, stdout, stderr = run(fake_chronicle, "knowledge", "--json", cwd=tmp_path)
    assert (code, stdout) == (1, "")
    assert stderr.startswith(f"{store.fixture_path}: not valid JSON")


def test_opening_the_workspace_writes_machine_json_and_one_event_a_day(fake_chronicle, repo):
    for _ in range(2):
        assert run(fake_chronicle, "knowledge", "--json", cwd=repo)[0] == 0
    machine = json.loads((repo / ".chronicle" / ".local" / "machine.json").read_text())
    assert machine["lastKnownPath"] == str(repo)
    assert machine["workspace"].startswith("wks_")
    (ops,) = (repo / ".chronicle" / ".local" / "ops").rglob("ops.jsonl")
    events = [json.loads(line) for line in ops.read_text().splitlines()]
    assert [event["type"] for event in events] == ["ProjectOpened"]
    assert list(events[0]) == ["v", "id", "ts", "type", "actor", "git", "payload", "meta"]
    assert ops.parent.name == machine["lastProjectOpenedDay"][5:7]


def test_a_usage_error_has_no_side_effects(fake_chronicle, repo):
    assert run(fake_chronicle, "context", "..", "--json", cwd=repo)[0] == 2
    assert not (repo / ".chronicle" / ".local").exists()


def test_human_knowledge_listing(fake_chronicle, repo):
    code, stdout, _ = run(fake_chronicle, "knowledge", "--type", "todo", cwd=repo)
    assert code == 0
    assert stdout == (
        "todos (3):\n\n"
        "  We should use Redis for sessions in src/session/store.ts\n"
        "     human · 2026-07-20 09:12 · medium · "
        "chronicle inspect evt_01KXZCQYYKP5HWPGR3B7QWVH44\n"
        "  TODO: add an index on sessions.expires_at\n"
        "     agent · 2026-07-21 14:04 · high · chronicle inspect evt_01KY2FVW50VQX1FNJ14RV4KQA3\n"
        "  TODO: retry on 429\n"
        "     human · 2026-07-22 16:41 · high · chronicle inspect evt_01KY5B7KDJBHWCAWD2S0BPEW7X\n"
    )


def test_knowledge_by_session(fake_chronicle, repo):
    code, stdout, _ = run(
        fake_chronicle,
        "knowledge",
        "--session",
        "ses_01KY2FTAMYDJ86ARKAKRPQ5HA1",
        "--json",
        cwd=repo,
    )
    reply = json.loads(stdout)
    assert (code, reply["count"]) == (0, 1)
    assert reply["items"][0]["text"] == "TODO: add an index on sessions.expires_at"


def test_the_call_runs_in_the_working_directory_it_was_given(fake_chronicle, repo):
    run(fake_chronicle, "knowledge", "--json", cwd=repo / "src")
    (call,) = fake_chronicle.calls()
    assert call.cwd == os.path.realpath(repo / "src")
    assert call.argv == ["knowledge", "--json"]
