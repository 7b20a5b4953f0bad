"""Claude Code (three versions' shapes), Pi (format versions 1-3) and OpenCode (both stores).

The fixtures under ``fixtures/`` are written by this project in each harness's
real format; ``__PROJECT__`` stands for the project root. Every scenario is
checked the same way: ingest succeeds, a second run adds nothing, no valid
line is malformed, one session per transcript, every human prompt is stored
as a prompt and nothing else is, every tool call is stored, and the files the
edit tools changed (main thread and subagents) are exactly the expected ones.
"""

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from karni_historian.cli import main
from karni_historian.ingest import ingest
from karni_historian.ingest.claude_code import project_key
from karni_historian.ingest.pi import folder_name
from karni_historian.model import TextPart, ToolPart
from karni_historian.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
CC1 = "fe5e1c67-1111-4862-81ae-d0e013e3270b"
CC2 = "5c0375b4-2222-4f26-b12d-d022ee4e51b7"
CC3 = "7d3e2a10-3333-4f1e-9a2d-3b8c6e1f0a42"
OC = "ses_2e4f6a8b0ffeQk3mN7pR9sT1vX"


@pytest.fixture
def project(tmp_path, monkeypatch, user_folders):
    root = tmp_path / "shop-project"
    root.mkdir()
    (root / "manage.py").write_text("")
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.chdir(root)
    return root


def _placed(text: str, root: Path) -> str:
    return text.replace("__PROJECT__", str(root))


def install_claude(root: Path, version: str) -> Path:
    """Copy a Claude Code fixture tree into the project's folder of the config dir."""
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / project_key(str(root))
    source = FIXTURES / f"claude_code_{version}"
    for path in sorted(source.rglob("*")):
        if path.is_file() and not path.name.startswith("later-"):
            target = folder / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_placed(path.read_text(encoding="utf-8"), root), encoding="utf-8")
    return folder


def install_pi(root: Path, version: int) -> Path:
    folder = Path(os.environ["PI_CODING_AGENT_DIR"]) / "sessions" / folder_name(str(root))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-11-20T23-33-50-805Z_v{version}.jsonl"
    text = (FIXTURES / f"pi_v{version}.jsonl").read_text(encoding="utf-8")
    path.write_text(_placed(text, root), encoding="utf-8")
    return path


def opencode_rows(root: Path) -> list[dict]:
    text = _placed((FIXTURES / "opencode_rows.jsonl").read_text(encoding="utf-8"), root)
    return [json.loads(line) for line in text.splitlines()]


def install_opencode_db(root: Path, rows: list[dict]) -> Path:
    """Build OpenCode's SQLite store (``message``/``part`` hold ``data`` without ids)."""
    path = Path(os.environ["XDG_DATA_HOME"]) / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(
        "CREATE TABLE IF NOT EXISTS session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT,"
        " slug TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER,"
        " time_updated INTEGER);"
        "CREATE TABLE IF NOT EXISTS message (id TEXT PRIMARY KEY, session_id TEXT,"
        " time_created INTEGER, time_updated INTEGER, data TEXT);"
        "CREATE TABLE IF NOT EXISTS part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
        " time_created INTEGER, time_updated INTEGER, data TEXT);"
    )
    for row in rows:
        table = row.pop("table")
        if "data" in row:
            row["data"] = json.dumps(row["data"])
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        connection.execute(
            f"INSERT OR REPLACE INTO {table} ({names}) VALUES ({marks})", list(row.values())
        )
    connection.commit()
    connection.close()
    return path


def install_opencode_files(root: Path, rows: list[dict]) -> Path:
    """Write the same rows as OpenCode's older JSON files under ``storage/``."""
    storage = Path(os.environ["XDG_DATA_HOME"]) / "opencode" / "storage"
    for row in rows:
        table = row["table"]
        if table == "session":
            data = {
                "id": row["id"],
                "projectID": row["project_id"],
                "directory": row["directory"],
                "title": row["title"],
                "time": {"created": row["time_created"], "updated": row["time_updated"]},
            }
            if row["parent_id"]:
                data["parentID"] = row["parent_id"]
            path = storage / "session" / row["project_id"] / f"{row['id']}.json"
        elif table == "message":
            data = {"id": row["id"], "sessionID": row["session_id"], **row["data"]}
            path = storage / "message" / row["session_id"] / f"{row['id']}.json"
        else:
            data = {
                "id": row["id"],
                "sessionID": row["session_id"],
                "messageID": row["message_id"],
                **row["data"],
            }
            path = storage / "part" / row["message_id"] / f"{row['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2))
    return storage


def run(root, sources=None):
    with Store.open(root, create=True) as store:
        return ingest(store, root, sources)


class Stored:
    """What the store holds, counted the way a reader of it would."""

    def __init__(self, root: Path) -> None:
        self.root = root
        with Store.open(root) as store:
            self.sessions = {s.id: s for s in store.sessions()}
            self.messages = {sid: store.messages(sid) for sid in self.sessions}
            rows = store.connection.execute(
                "SELECT session_id, ordinal, path, action FROM message_files"
            ).fetchall()
        self.files = rows

    def prompts(self, session_id: str) -> list[str]:
        return [
            part.text
            for message in self.messages[session_id]
            if message.role == "user"
            for part in message.parts
            if isinstance(part, TextPart) and not part.ignored
        ]

    def calls(self, session_id: str) -> list[ToolPart]:
        return [
            part
            for message in self.messages[session_id]
            if message.role == "assistant"
            for part in message.parts
            if isinstance(part, ToolPart)
        ]

    def references(self, session_id: str) -> int:
        """How many stored results refer to their call instead of copying it."""
        with Store.open(self.root) as store:
            rows = store.connection.execute(
                "SELECT count(*) FROM raw_messages WHERE session_id = ? AND role = 'user'"
                " AND instr(parts_json, '\"copy_of\"') > 0",
                (session_id,),
            ).fetchone()
        return int(rows[0])

    def edited(self, session_id: str) -> set[str]:
        return {p for s, _, p, a in self.files if s == session_id and a in ("edit", "create")}


def check_twice(root, sources=None):
    """Ingest twice: the first adds without malformed lines, the second adds nothing."""
    first = run(root, sources)
    assert first.malformed == 0, first.warnings()
    assert first.messages_added > 0
    assert [w for w in first.warnings()] == []
    second = run(root, sources)
    assert (second.messages_added, second.malformed) == (0, 0)
    return first


def test_claude_code_1_0_inline_sidechains_and_a_slash_command(project):
    install_claude(project, "1.0")
    report = check_twice(project)
    stored = Stored(project)
    assert list(stored.sessions) == [CC1]
    assert stored.prompts(CC1) == [
        "/orchestrator build the cart app",
        "Thanks! Now update README.md for these changes",
    ]
    calls = {call.call_id: call for call in stored.calls(CC1)}
    assert set(calls) == {
        "toolu_01TaskModels",
        "toolu_01TaskCart",
        "toolu_01SideWrite",
        "toolu_01SideEdit",
        "toolu_01SideMulti",
        "toolu_01SideFail",
        "toolu_01Readme",
    }
    # The sidechain of the second Task ran first: it is matched by its prompt.
    assert calls["toolu_01SideWrite"].metadata == {"subagent": "toolu_01TaskCart"}
    assert calls["toolu_01SideEdit"].metadata == {"subagent": "toolu_01TaskModels"}
    assert calls["toolu_01Readme"].metadata is None
    assert calls["toolu_01SideFail"].is_error
    assert stored.edited(CC1) == {"app/cart.py", "app/models.py", "app/views.py", "README.md"}
    # Its summary line names another session (its leaf is not in this file).
    assert stored.sessions[CC1].title == "/orchestrator build the cart app"
    assert report.summary().startswith("ingested 1 of 1 transcript file(s):")


def test_claude_code_2_0_flat_agent_files(project):
    folder = install_claude(project, "2.0")
    report = check_twice(project)
    stored = Stored(project)
    assert list(stored.sessions) == [CC2]  # agent files are not sessions
    # A tool result before the first typed prompt is no prompt and no error.
    assert stored.prompts(CC2) == ["Run the tests and fix the failures", "/init is what I meant"]
    calls = {call.call_id: call for call in stored.calls(CC2)}
    assert set(calls) == {"toolu_02Read", "toolu_02Task", "toolu_02AgBash", "toolu_02AgEdit"}
    assert calls["toolu_02AgEdit"].metadata == {"subagent": "toolu_02Task"}
    assert stored.edited(CC2) == {"tests/test_cart.py"}
    # The subagent's work is stored right after the Task result, before the answer.
    roles = [(m.role, [type(p).__name__ for p in m.parts]) for m in stored.messages[CC2]]
    task_result = next(
        i
        for i, m in enumerate(stored.messages[CC2])
        if m.role == "user" and m.parts[0] == calls["toolu_02Task"]
    )
    assert roles[task_result + 1] == ("assistant", ["ToolPart"])
    assert stored.messages[CC2][-1].parts == (TextPart("Understood."),)
    # The warm-up agent adds nothing; both agent files are read.
    assert not any("ready to help" in repr(m) for m in stored.messages[CC2])
    agents = sorted(Path(f.path).name for f in report.files if f.kind == "claude-code-agent")
    assert agents == ["agent-1a2b3c4d.jsonl", "agent-9f9f9f9f.jsonl"]
    assert report.summary().startswith("ingested 1 of 1 transcript file(s) and 2 subagent file(s):")
    assert (folder / "agent-1a2b3c4d.jsonl").exists()


def test_claude_code_2_1_nested_subagents_meta_files_and_attachments(project):
    folder = install_claude(project, "2.1")
    check_twice(project)
    stored = Stored(project)
    assert list(stored.sessions) == [CC3]
    assert stored.prompts(CC3) == [
        "Add a discount(price, rate) helper to app/pricing.py",
        "also check the docs",
    ]
    calls = {call.call_id: call for call in stored.calls(CC3)}
    assert set(calls) == {
        "toolu_03Agent",
        "toolu_03SubWrite",
        "toolu_03SubNote",
        "toolu_03Bg",
        "toolu_03BgEdit",
    }
    # No agent id in the first result: the meta file's toolUseId links it.
    assert calls["toolu_03SubWrite"].metadata == {"subagent": "toolu_03Agent"}
    assert calls["toolu_03BgEdit"].metadata == {"subagent": "toolu_03Bg"}
    assert stored.edited(CC3) == {"app/pricing.py", "notes/pricing.ipynb", "docs/pricing.md"}
    assert stored.sessions[CC3].title == "Pricing: discount()"
    # The background agent keeps writing after its launch was reported.
    later = (FIXTURES / "claude_code_2.1" / "later-agent-b9c8d7e6f5a4b3c2d.jsonl").read_text()
    agent_file = folder / CC3 / "subagents" / "agent-b9c8d7e6f5a4b3c2d.jsonl"
    with agent_file.open("a", encoding="utf-8") as handle:
        handle.write(_placed(later, project))
    report = run(project)
    assert (report.messages_added, report.malformed) == (1, 0)
    last = Stored(project).messages[CC3][-1]
    assert last.parts == (TextPart("docs/pricing.md now documents discount()."),)
    assert last.message_id == "agent-b9c8d7e6f5a4b3c2d/msg_03BgDone"


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_subagent_blocks_are_looked_up_once_per_group(project, monkeypatch, tmp_path, version):
    # A subagent's responses (their ids carry the agent's key) are found by the group's
    # one query, never line by line, even when every message has left the writer's cache;
    # the store is the same as with the usual group and cache sizes.
    import karni_historian.ingest as ingest_module
    from karni_historian.ingest import sink

    install_claude(project, version)
    run(project)
    expected = {sid: [repr(m) for m in ms] for sid, ms in Stored(project).messages.items()}
    shutil.rmtree(project / ".karni")
    monkeypatch.setattr(ingest_module, "_GROUP_LINES", 2)
    monkeypatch.setattr(sink, "_CACHE_LIMIT", 1)
    lookups = []
    original = Store.ordinal_of_message_id

    def one_by_one(store, session_id, message_id):
        lookups.append(message_id)
        return original(store, session_id, message_id)

    monkeypatch.setattr(Store, "ordinal_of_message_id", one_by_one)
    report = run(project)
    assert report.malformed == 0
    assert [key for key in lookups if "agent-" in key] == []
    got = {sid: [repr(m) for m in ms] for sid, ms in Stored(project).messages.items()}
    assert got == expected


def test_a_flat_agent_file_opening_with_a_non_message_still_names_its_session(project):
    # The parent session of a flat agent file is the one its first message names, even
    # when the file opens with another record and lines are read in small groups.
    import karni_historian.ingest as ingest_module

    folder = install_claude(project, "2.0")
    agent_file = folder / "agent-1a2b3c4d.jsonl"
    opening = json.dumps({"type": "summary", "summary": "Fixing tests", "leafUuid": "elsewhere"})
    agent_file.write_text(opening + "\n" + agent_file.read_text(encoding="utf-8"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest_module, "_GROUP_LINES", 2)
        check_twice(project)
    stored = Stored(project)
    assert list(stored.sessions) == [CC2]
    calls = {call.call_id: call for call in stored.calls(CC2)}
    assert calls["toolu_02AgEdit"].metadata == {"subagent": "toolu_02Task"}


def test_sessions_lists_each_harness(project, capsys):
    install_claude(project, "2.0")
    install_pi(project, 3)
    install_opencode_db(project, opencode_rows(project))
    assert main(["ingest"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert out.startswith("ingested 3 of 3 transcript file(s) and 2 subagent file(s): ")
    assert main(["sessions"]) == 0
    harnesses = sorted(line.split()[1] for line in capsys.readouterr().out.splitlines())
    assert harnesses == ["claude-code", "opencode", "pi"]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_pi_session_versions(project, version):
    path = install_pi(project, version)
    report = check_twice(project)
    assert [(Path(f.path).name, f.kind) for f in report.files] == [(path.name, "pi")]
    stored = Stored(project)
    [session_id] = stored.sessions
    assert stored.sessions[session_id].source == "pi"
    assert stored.prompts(session_id) == [
        "Port the selector to the theme system",
        "Also run the linter",
    ]
    calls = {call.call_id: call for call in stored.calls(session_id)}
    assert set(calls) == {
        "toolu_pi_read",
        "toolu_pi_edit",
        "toolu_pi_write",
        "toolu_pi_bad",
        "call_pi_lint",
    }
    assert calls["toolu_pi_edit"].output == "Successfully replaced text in src/selector.ts."
    answers = [m for m in stored.messages[session_id] if m.parts[0] == calls["toolu_pi_edit"]]
    assert [m.role for m in answers] == ["assistant", "user"]
    assert stored.references(session_id) == len(calls)  # each result refers to its call
    assert calls["toolu_pi_bad"].is_error
    assert stored.edited(session_id) == {"src/selector.ts", "src/theme.ts"}
    bash = [
        m
        for m in stored.messages[session_id]
        if m.parts[0]
        == ToolPart("bash", {"command": "npm test"}, "4 passing", metadata={"run_by": "user"})
    ]
    assert len(bash) == 1 and bash[0].role == "user"
    expected_title = "Theme port" if version == 3 else "Port the selector to the theme system"
    assert stored.sessions[session_id].title == expected_title


def test_a_harness_command_typed_first_does_not_title_the_session(project):
    path = install_pi(project, 2)
    lines = path.read_text(encoding="utf-8").splitlines()
    command = lines[3].replace("Port the selector to the theme system", "/mode")
    command = command.replace('"id":"00000003"', '"id":"0000000c"')
    path.write_text("\n".join([*lines[:3], command, *lines[3:]]) + "\n", encoding="utf-8")
    run(project)
    [session] = Stored(project).sessions.values()
    assert session.title == "Port the selector to the theme system"


def test_pi_migration_rewrite_and_fork_add_nothing_twice(project):
    path = install_pi(project, 1)
    run(project)
    # Pi migrates a version-1 file in place when it opens it: new ids, a new header.
    migrated = path.read_text().splitlines()
    header = json.loads(migrated[0])
    entries = [json.loads(line) for line in migrated[1:]]
    parent = None
    for number, entry in enumerate(entries, 1):
        entry.update(id=f"{number:08x}", parentId=parent)
        parent = entry["id"]
    entries.append(
        {
            "type": "message",
            "id": "0000ffff",
            "parentId": parent,
            "timestamp": "2025-11-20T23:35:30.000Z",
            "message": {"role": "user", "content": "One more thing", "timestamp": 1763681730000},
        }
    )
    lines = [json.dumps({**header, "version": 3})] + [json.dumps(e) for e in entries]
    path.write_text("\n".join(lines) + "\n")
    report = run(project)
    assert (report.messages_added, report.malformed) == (1, 0)
    # A fork copies the entries (ids kept) into a new session file.
    fork = path.with_name("2025-11-21T00-00-00-000Z_fork.jsonl")
    fork_header = {**header, "version": 3, "id": "fork-session", "parentSession": str(path)}
    fork.write_text("\n".join([json.dumps(fork_header), *lines[1:]]) + "\n")
    assert run(project).messages_added == 0


def test_pi_sessions_of_other_projects_and_explicit_session_dirs(project, tmp_path, monkeypatch):
    install_pi(project, 3)
    other = Path(os.environ["PI_CODING_AGENT_DIR"]) / "sessions" / folder_name("/elsewhere/app")
    other.mkdir(parents=True)
    text = (FIXTURES / "pi_v2.jsonl").read_text().replace("__PROJECT__", "/elsewhere/app")
    (other / "x_other.jsonl").write_text(text)
    chosen = tmp_path / "pi-sessions"
    chosen.mkdir()
    (chosen / "2025-12-01T00-00-00-000Z_chosen.jsonl").write_text(
        _placed((FIXTURES / "pi_v2.jsonl").read_text(), project / "sub")
    )
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(chosen))
    run(project)
    stored = Stored(project)
    assert sorted(stored.sessions) == [
        "019daa1e-3680-7d10-9e2f-5a6b7c8d9e0f",
        "3b1c5e2a-9d4f-4a6b-8c7d-1e2f3a4b5c6d",
    ]
    # Paths are resolved against the session's own folder (a subfolder here).
    assert stored.edited("3b1c5e2a-9d4f-4a6b-8c7d-1e2f3a4b5c6d") == {
        "sub/src/selector.ts",
        "sub/src/theme.ts",
    }


def test_pi_file_from_option_is_recognised(project, tmp_path):
    copy = tmp_path / "export.jsonl"
    copy.write_text(_placed((FIXTURES / "pi_v3.jsonl").read_text(), project))
    report = run(project, [str(copy)])
    assert [f.kind for f in report.files] == ["pi"]
    assert report.messages_added > 0


@pytest.mark.parametrize("generation", ["files", "database"])
def test_opencode_stores(project, generation):
    rows = opencode_rows(project)
    install = install_opencode_files if generation == "files" else install_opencode_db
    install(project, rows)
    report = check_twice(project)
    assert [f.kind for f in report.files] == ["opencode"]
    stored = Stored(project)
    assert list(stored.sessions) == [OC]  # neither the child nor the other project's
    assert stored.sessions[OC].title == "Rename total helper to subtotal"
    assert stored.prompts(OC) == [
        "Rename total() to subtotal() in cart.py",
        "Now add tests for subtotal()",
    ]
    calls = {call.call_id: call for call in stored.calls(OC)}
    assert set(calls) == {
        "toolu_oc_read",
        "toolu_oc_edit",
        "toolu_oc_write",
        "toolu_oc_bad",
        "toolu_oc_patch",
        "toolu_oc_task",
        "toolu_oc_child_edit",
    }
    assert calls["toolu_oc_child_edit"].metadata == {"subagent": "toolu_oc_task"}
    assert calls["toolu_oc_edit"].output == "Edit applied successfully."
    assert (
        calls["toolu_oc_bad"].is_error and calls["toolu_oc_bad"].output == "Error: file not found"
    )
    assert stored.edited(OC) == {
        "cart.py",
        "shop/tax.py",
        "shop/orders.py",
        "shop/README.md",
        "docs/cart.md",
    }
    # The child's messages follow the task call; its prompt is not a prompt.
    ids = [m.message_id for m in stored.messages[OC]]
    assert (
        ids.index("msg_e1a2b3cb0001ChildStepAbCdE")
        == ids.index("msg_e1a2b3c90001Uv9Wx1Yz3Ab5Ce") + 1
    )
    # The running step is not taken until it completes.
    assert "msg_e1a2b3ce0001RunningStepAbC" not in ids


def test_opencode_step_completing_later_is_taken_then(project):
    rows = opencode_rows(project)
    install_opencode_db(project, [dict(row) for row in rows])
    run(project)
    running = "msg_e1a2b3ce0001RunningStepAbC"
    done = [
        dict(row) for row in rows if row.get("id") in (running, "prt_e1a2b3ce0002RunningToolAbC")
    ]
    for row in done:
        row["time_updated"] += 5000
        if row["table"] == "message":
            row["data"]["time"]["completed"] = row["data"]["time"]["created"] + 900
        else:
            row["data"]["state"].update(status="completed", output="Wrote tests/test_cart.py")
    install_opencode_db(project, done)
    report = run(project)
    assert report.messages_added == 1
    stored = Stored(project)
    assert stored.messages[OC][-1].message_id == running
    assert "tests/test_cart.py" in stored.edited(OC)
    assert run(project).messages_added == 0


def test_opencode_database_and_older_files_are_read_once(project):
    rows = opencode_rows(project)
    install_opencode_files(project, rows)
    install_opencode_db(project, [dict(row) for row in opencode_rows(project)])
    report = check_twice(project)
    assert [f.kind for f in report.files] == ["opencode", "opencode"]
    stored = Stored(project)
    ids = [m.message_id for m in stored.messages[OC]]
    assert len(ids) == len(set(ids))


def test_unreadable_opencode_database_is_named(project):
    path = Path(os.environ["XDG_DATA_HOME"]) / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all")
    report = run(project)
    [warning] = report.warnings()
    assert warning.startswith(f"did not read {path}: cannot open it read-only")


def test_unrecognised_file_is_named(project, tmp_path, capsys):
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": "world"}\n')
    assert main(["ingest", "--from", str(odd)]) == 0
    out, err = capsys.readouterr()
    assert err == (
        f"karni-historian: did not read {odd}: no reader recognises its format (Claude Code, "
        "Codex, Gemini CLI, Pi, Oh My Pi, OpenCode, Aider, Chronicle or the generic JSONL format; "
        "see docs/historian/harnesses.md)\n"
    )
    assert out == "ingested 0 of 1 transcript file(s): 0 new message(s) in 0 session(s)\n"


def test_from_a_claude_code_folder_reads_subagents_into_their_session(project, tmp_path):
    folder = install_claude(project, "2.1")
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    shutil.rmtree(folder)
    check_twice(project, [str(copy)])
    stored = Stored(project)
    assert list(stored.sessions) == [CC3]
    assert stored.edited(CC3) == {"app/pricing.py", "notes/pricing.ipynb", "docs/pricing.md"}


def test_from_an_opencode_folder_or_database(project, tmp_path):
    rows = opencode_rows(project)
    storage = install_opencode_files(project, [dict(row) for row in rows])
    moved = tmp_path / "export" / "storage"
    moved.parent.mkdir()
    shutil.move(str(storage), moved)
    report = check_twice(project, [str(moved.parent)])
    assert [(f.path, f.kind) for f in report.files] == [(str(moved), "opencode")]
    database = install_opencode_db(project, [dict(row) for row in rows])
    report = run(project, [str(database)])
    assert [(f.path, f.kind, f.added) for f in report.files] == [(str(database), "opencode", 0)]


def test_pi_session_dir_setting_of_the_project(project, tmp_path):
    chosen = tmp_path / "kept-sessions"
    (chosen / "2026").mkdir(parents=True)
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": str(chosen)}))
    text = _placed((FIXTURES / "pi_v3.jsonl").read_text(), project)
    (chosen / "2026" / "2026-04-20T09-00-00-000Z_x.jsonl").write_text(text)
    check_twice(project)
    assert list(Stored(project).sessions) == ["019daa1e-3680-7d10-9e2f-5a6b7c8d9e0f"]


def test_pi_subagent_extension_work_is_stored_with_its_call(project):
    path = install_pi(project, 3)
    nested_call = {
        "role": "assistant",
        "content": [
            {
                "type": "toolCall",
                "id": "toolu_child_edit",
                "name": "edit",
                "arguments": {"path": "docs/theme.md", "edits": [{"oldText": "a", "newText": "b"}]},
            }
        ],
        "stopReason": "toolUse",
        "timestamp": 1763681800000,
    }
    nested_result = {
        "role": "toolResult",
        "toolCallId": "toolu_child_edit",
        "toolName": "edit",
        "content": [{"type": "text", "text": "Successfully replaced text in docs/theme.md."}],
        "isError": False,
        "timestamp": 1763681801000,
    }
    call = {
        "type": "message",
        "id": "0000aaa1",
        "parentId": None,
        "timestamp": "2025-11-20T23:36:00.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "toolu_subagent",
                    "name": "subagent",
                    "arguments": {"agent": "writer", "task": "Document the theme"},
                }
            ],
            "stopReason": "toolUse",
            "timestamp": 1763681790000,
        },
    }
    result = {
        "type": "message",
        "id": "0000aaa2",
        "parentId": "0000aaa1",
        "timestamp": "2025-11-20T23:36:30.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "toolu_subagent",
            "toolName": "subagent",
            "content": [{"type": "text", "text": "Documented."}],
            "details": {
                "results": [
                    {
                        "agent": "writer",
                        "messages": [
                            {
                                "role": "user",
                                "content": "Document the theme",
                                "timestamp": 1763681795000,
                            },
                            nested_call,
                            nested_result,
                        ],
                    }
                ]
            },
            "isError": False,
            "timestamp": 1763681830000,
        },
    }
    with path.open("a") as handle:
        handle.write(json.dumps(call) + "\n" + json.dumps(result) + "\n")
    check_twice(project)
    stored = Stored(project)
    [session_id] = stored.sessions
    calls = {c.call_id: c for c in stored.calls(session_id)}
    assert calls["toolu_child_edit"].metadata == {"subagent": "toolu_subagent"}
    assert calls["toolu_child_edit"].output == "Successfully replaced text in docs/theme.md."
    assert "docs/theme.md" in stored.edited(session_id)
    assert "Document the theme" not in stored.prompts(session_id)
