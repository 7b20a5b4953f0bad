import io
import json
import os
from pathlib import Path

import pytest
from karni_historian.ingest import IngestError, ingest, reader
from karni_historian.ingest.claude_code import ClaudeCodeReader, find_files, project_key
from karni_historian.model import TextPart, ToolPart
from karni_historian.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = "7d3e2a10-5c4b-4f1e-9a2d-3b8c6e1f0a42"


@pytest.fixture
def project(tmp_path, monkeypatch, user_folders):
    root = tmp_path / "shop-project"
    root.mkdir()
    (root / "manage.py").write_text("")
    return root


def session_file(root: Path) -> Path:
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / project_key(str(root))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{SESSION}.jsonl"


def install_fixture(root: Path) -> Path:
    text = (FIXTURES / "claude_code_session.jsonl").read_text(encoding="utf-8")
    path = session_file(root)
    path.write_text(text.replace("__PROJECT__", str(root)), encoding="utf-8")
    return path


def run(root, sources=None, stream=None):
    with Store.open(root, create=True) as store:
        return ingest(store, root, sources, progress_stream=stream)


def test_project_key_matches_claude_code():
    assert project_key("/Users/ana/my_app.v2") == "-Users-ana-my-app-v2"
    assert project_key("C:\\work\\x") == "C--work-x"
    assert project_key("/a/🙂") == "-a---"


def test_finds_only_main_session_files(project):
    path = install_fixture(project)
    (path.parent / "agent-1234abcd.jsonl").write_text("{}\n")
    (path.parent / SESSION / "subagents").mkdir(parents=True)
    (path.parent / SESSION / "subagents" / "agent-x.jsonl").write_text("{}\n")
    assert find_files(str(project)) == [str(path)]


def test_finds_sessions_started_in_subfolders(project, tmp_path):
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"
    inside = claude / project_key(str(project / "shop"))
    sibling = claude / project_key(str(project) + "-old")
    for folder, cwd in ((inside, project / "shop"), (sibling, str(project) + "-old")):
        folder.mkdir(parents=True)
        record = {"type": "user", "cwd": str(cwd), "sessionId": "x", "message": {}}
        (folder / "s.jsonl").write_text(json.dumps(record) + "\n")
    assert find_files(str(project)) == [str(inside / "s.jsonl")]


def test_claude_code_session_end_to_end(project):
    path = install_fixture(project)
    report = run(project)
    assert report.summary() == (
        "ingested 1 of 1 transcript file(s): 32 new message(s) in 1 session(s)"
    )
    file = report.files[0]
    assert (file.kind, file.lines, file.malformed, file.torn) == ("claude-code", 39, 0, True)
    with Store.open(project) as store:
        messages = store.messages(SESSION)
        session = store.session(SESSION)
        files = store.connection.execute(
            "SELECT ordinal, path, action FROM message_files ORDER BY ordinal, path"
        ).fetchall()
        cursor = store.cursor(str(path))
    assert session.title == "Rename total helper to subtotal"
    assert session.first_ts == "2026-03-02T10:15:00.100Z"
    assert len(messages) == 32
    first, second, third = messages[:3]
    assert first.parts == (TextPart("Rename the total() helper in cart.py to subtotal()"),)
    # The thinking block is dropped; text and tool_use blocks of msg_01A make one message.
    assert second.role == "assistant" and second.message_id == "msg_01A"
    assert second.parts[0] == TextPart("I'll read cart.py first.")
    call = second.parts[1]
    assert (call.name, call.call_id, call.input) == (
        "Read",
        "toolu_01Read",
        {"file_path": f"{project}/shop/cart.py"},
    )
    assert call.output.startswith("     1\tdef total(items):")
    # The tool result stays a user message carrying a copy of the call with its output.
    assert third.role == "user"
    assert third.parts == (call,)
    failed = messages[16].parts[0]
    assert isinstance(failed, ToolPart) and failed.is_error
    assert [p.ignored for p in messages[22].parts] == [True]  # /cost command
    assert [p.ignored for p in messages[23].parts] == [True]  # its stdout
    assert files == [
        (2, "shop/cart.py", "read"),
        (4, "shop/cart.py", "edit"),
        (14, "shop/pricing.py", "create"),
        (18, "shop/cart.py", "read"),
        (20, "shop/cart.py", "edit"),
        (26, "shop/cart.py", "edit"),
        (30, "README.md", "edit"),
    ]
    torn_at = path.read_bytes().rindex(b"\n") + 1
    assert cursor.offset == torn_at and cursor.lines == 39


def test_second_run_adds_nothing(project):
    install_fixture(project)
    run(project)
    report = run(project)
    assert report.messages_added == 0
    assert (
        report.summary() == "ingested 0 of 1 transcript file(s): 0 new message(s) in 0 session(s)"
    )


def test_grown_file_adds_only_its_new_lines(project):
    path = install_fixture(project)
    run(project)
    data = path.read_bytes()
    torn = data[data.rindex(b"\n") + 1 :]
    rest = json.dumps(
        {
            "parentUuid": None,
            "type": "user",
            "message": {"role": "user", "content": "Now add a tax helper"},
            "uuid": "torn-0001",
            "timestamp": "2026-03-02T10:20:00.100Z",
            "cwd": str(project),
            "sessionId": SESSION,
        },
        separators=(",", ":"),
    )
    # The torn line is completed and another line appended.
    assert rest.startswith('{"parentUuid":null')
    with path.open("ab") as handle:
        handle.truncate(len(data) - len(torn))
    with path.open("ab") as handle:
        handle.write(rest.encode() + b"\n")
        handle.write(b'{"type":"ai-title","aiTitle":"Shop pricing work","sessionId":"x"}\n')
    report = run(project)
    assert report.messages_added == 1
    assert report.files[0].lines == 2
    assert not report.files[0].torn
    with Store.open(project) as store:
        assert store.message(SESSION, 33).parts == (TextPart("Now add a tax helper"),)
        assert store.message_count(SESSION) == 33
        assert store.session(SESSION).title == "Shop pricing work"


def assistant_line(message_id, block, uuid, project):
    return json.dumps(
        {
            "type": "assistant",
            "uuid": uuid,
            "parentUuid": None,
            "timestamp": "2026-03-02T10:15:00.000Z",
            "cwd": str(project),
            "sessionId": SESSION,
            "message": {"id": message_id, "role": "assistant", "content": [block]},
        }
    )


def result_line(call_id, output, uuid, project, result=None):
    record = {
        "type": "user",
        "uuid": uuid,
        "parentUuid": None,
        "timestamp": "2026-03-02T10:15:01.000Z",
        "cwd": str(project),
        "sessionId": SESSION,
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}],
        },
        "toolUseResult": result or {"filePath": "x"},
    }
    return json.dumps(record)


def test_blocks_and_results_join_their_message_across_runs(project):
    path = session_file(project)
    edit = {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "Edit",
        "input": {"file_path": str(project / "a.py")},
    }
    path.write_text(
        assistant_line("msg_9", {"type": "text", "text": "Editing a.py."}, "u1", project) + "\n"
    )
    run(project)
    with path.open("a") as handle:
        handle.write(assistant_line("msg_9", edit, "u2", project) + "\n")
    run(project)
    with path.open("a") as handle:
        handle.write(result_line("toolu_9", "updated", "u3", project) + "\n")
    run(project)
    with Store.open(project) as store:
        messages = store.messages(SESSION)
        assert [m.role for m in messages] == ["assistant", "user"]
        assert messages[0].parts == (
            TextPart("Editing a.py."),
            ToolPart("Edit", {"file_path": str(project / "a.py")}, "updated", call_id="toolu_9"),
        )
        assert messages[1].parts == (messages[0].parts[1],)
        assert store.files(SESSION, 1) == [("a.py", "edit")]


def stored_parts(root, ordinal):
    with Store.open(root) as store:
        row = store.raw_message(SESSION, ordinal)
    assert row is not None
    return json.loads(row[1])


def test_a_result_is_stored_once_and_read_back_as_its_call(project):
    # The result's own message keeps a reference to the call, which holds the
    # output; every way of reading the store gives the result the call's part.
    path = session_file(project)
    read_input = {"file_path": str(project / "a.py")}
    read = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": read_input}
    lines = [
        assistant_line("msg_1", read, "u1", project),
        result_line("toolu_1", "print('a')", "u2", project),
        result_line("toolu_1", "print('again')", "u3", project),
        result_line("toolu_unknown", "orphan", "u4", project),
    ]
    path.write_text("\n".join(lines) + "\n")
    run(project)
    reference = {"type": "tool", "name": "Read", "call_id": "toolu_1", "copy_of": 1}
    assert stored_parts(project, 2) == [reference]
    call = ToolPart("Read", read_input, "print('a')", call_id="toolu_1")
    again = ToolPart("Read", read_input, "print('again')", call_id="toolu_1")
    orphan = ToolPart("tool", None, "orphan", call_id="toolu_unknown")
    with Store.open(project) as store:
        assert [m.parts for m in store.messages(SESSION)] == [(call,), (call,), (again,), (orphan,)]
        assert store.message(SESSION, 2).parts == (call,)  # the call read on its own
        assert store.message_batch(SESSION, 2, 1)[0].parts == (call,)
        assert [m.parts for m in store.messages_at(SESSION, [2, 3])] == [(call,), (again,)]
        assert store.files(SESSION, 1) == [("a.py", "read")]


def test_a_reference_to_a_missing_call_reads_as_a_bare_result(project):
    with Store.open(project, create=True) as store, store.transaction():
        store.ensure_session(SESSION, "claude-code")
        dangling = [{"type": "tool", "name": "Read", "call_id": "c1", "copy_of": 7}]
        store.write_message(SESSION, 1, "user", json.dumps(dangling))
    with Store.open(project) as store:
        assert store.message(SESSION, 1).parts == (ToolPart("Read", None, None, call_id="c1"),)


def test_duplicated_records_are_dropped_by_uuid(project):
    path = session_file(project)
    line = assistant_line("msg_1", {"type": "text", "text": "once"}, "same-uuid", project)
    path.write_text(f"{line}\n{line}\n")
    report = run(project)
    assert report.messages_added == 1


def test_malformed_lines_are_counted_and_skipped(project):
    path = install_fixture(project)
    lines = path.read_bytes().split(b"\n")
    lines.insert(3, b"{not json")
    lines.insert(6, b"[1, 2]")
    lines.insert(9, b'{"type":"assistant","uuid":"bad","message":"not an object"}')
    path.write_bytes(b"\n".join(lines))
    report = run(project)
    file = report.files[0]
    assert (file.malformed, file.first_malformed) == (3, 4)
    assert report.messages_added == 32
    assert report.warnings() == [f"skipped 3 malformed line(s) in {path} (first at line 4)"]
    assert report.summary().endswith("; 3 malformed line(s) skipped")


def test_nul_padding_and_blank_lines_are_tolerated(project):
    path = session_file(project)
    line = assistant_line("msg_1", {"type": "text", "text": "hi"}, "u", project)
    path.write_bytes(b"\x00\x00" + line.encode() + b"\n\n   \n")
    report = run(project)
    assert (report.messages_added, report.malformed) == (1, 0)


def test_interrupted_ingest_leaves_the_previous_state(project, monkeypatch):
    path = install_fixture(project)
    calls = {"n": 0}
    original = ClaudeCodeReader.feed

    def flaky(self, record):
        calls["n"] += 1
        if calls["n"] == 20:
            raise KeyboardInterrupt
        return original(self, record)

    monkeypatch.setattr(ClaudeCodeReader, "feed", flaky)
    with pytest.raises(KeyboardInterrupt):
        run(project)
    with Store.open(project) as store:
        assert store.message_count(SESSION) == 0
        assert store.cursor(str(path)) is None
        assert store.sessions() == []
    monkeypatch.setattr(ClaudeCodeReader, "feed", original)
    assert run(project).messages_added == 32


def test_batches_commit_their_cursor(project, monkeypatch):
    import karni_historian.ingest as ingest_module

    path = install_fixture(project)
    monkeypatch.setattr(ingest_module, "BATCH_BYTES", 4000)
    calls = {"n": 0}
    original = ClaudeCodeReader.feed

    def flaky(self, record):
        calls["n"] += 1
        if calls["n"] == 30:
            raise RuntimeError("disk on fire")
        return original(self, record)

    monkeypatch.setattr(ClaudeCodeReader, "feed", flaky)
    with pytest.raises(RuntimeError):
        run(project)
    with Store.open(project) as store:
        kept = store.message_count(SESSION)
        offset = store.cursor(str(path)).offset
    assert 0 < kept < 32
    assert path.read_bytes()[offset - 1 : offset] == b"\n"
    monkeypatch.setattr(ClaudeCodeReader, "feed", original)
    report = run(project)
    assert report.messages_added == 32 - kept
    with Store.open(project) as store:
        assert [m.ordinal for m in store.messages(SESSION)] == list(range(1, 33))


def test_replaced_file_is_reread_without_duplicates(project):
    path = install_fixture(project)
    run(project)
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data[: data.index(b"\n", 2000) + 1])  # a new inode, shorter
    assert run(project).messages_added == 0
    path.write_bytes(data)
    assert run(project).messages_added == 0


def test_generic_format(project, tmp_path):
    transcript = tmp_path / "export.jsonl"
    lines = [
        {
            "session": "g1",
            "role": "user",
            "text": "Fix the login bug",
            "id": "m1",
            "title": "Login",
        },
        {
            "session": "g1",
            "role": "assistant",
            "text": "Fixed it.",
            "id": "m2",
            "timestamp": "2026-01-02T03:04:05Z",
            "tools": [
                {
                    "name": "edit",
                    "input": {"path": "accounts/views.py"},
                    "output": {"ok": True},
                    "files": [
                        "accounts/views.py",
                        {"path": str(project / "accounts/forms.py"), "action": "read"},
                        {"path": "/elsewhere/x.py", "action": "read"},
                    ],
                }
            ],
        },
        {"session": "g1", "role": "robot", "text": "?"},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = run(project, [str(transcript)])
    assert (report.messages_added, report.malformed) == (2, 1)
    assert report.files[0].kind == "generic"
    with Store.open(project) as store:
        assert store.session("g1").title == "Login"
        message = store.message("g1", 2)
        assert message.parts == (
            TextPart("Fixed it."),
            ToolPart("edit", {"path": "accounts/views.py"}, '{"ok":true}'),
        )
        assert store.files("g1", 2) == [
            ("accounts/forms.py", "read"),
            ("accounts/views.py", "edit"),
        ]
    # Rewriting the file (a new inode) re-reads it; ids keep that idempotent.
    transcript.unlink()
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines[:2]))
    assert run(project, [str(transcript)]).messages_added == 0


def chronicle_event(kind, payload, n, session="ses_01KXKDN96K7VM8NGCZNM4J7VTG", v=1):
    return {
        "v": v,
        "id": f"evt_01KXKDQ87PR0PCPK1ZB8GCJF{n:02d}",
        "ts": f"2026-07-14T10:58:{n:02d}.293Z",
        "type": kind,
        "session": session,
        "actor": {"kind": "human"},
        "git": {"head": "b2b2879", "branch": "main", "dirty": []},
        "payload": payload,
        "meta": {"provider": "claude-code@0.1.0", "schema": f"{kind}/1", "visibility": "shared"},
    }


def test_chronicle_session_logs(project):
    import hashlib

    stream_dir = project / ".chronicle" / "sessions" / "2026" / "07"
    (stream_dir / "blobs").mkdir(parents=True)
    long_text = "A long answer.\n" * 10
    digest = hashlib.sha256(long_text.encode()).hexdigest()
    (stream_dir / "blobs" / f"sha256-{digest}.md").write_text(long_text)
    events = [
        chronicle_event("SessionStarted", {"title": "Events work", "resumedFrom": None}, 1),
        chronicle_event("PromptSubmitted", {"text": "make events soft-deletable"}, 2),
        chronicle_event(
            "ToolExecuted", {"tool": "Edit", "outcome": "ok", "summary": "Edit models"}, 3
        ),
        chronicle_event("FileModified", {"path": "apps/events/models.py"}, 4),
        chronicle_event("AIResponseReceived", {"text": {"$blob": f"sha256-{digest}"}}, 5),
        chronicle_event("GitCommitCreated", {"sha": "3f9a1c0d2b", "message": "Soft delete"}, 6),
        chronicle_event("PromptSubmitted", {"text": "[METADATA-ONLY]"}, 7),
        chronicle_event("PromptSubmitted", {"text": "from the future"}, 8, v=2),
        chronicle_event("PromptSubmitted", {"text": {"$blob": f"sha256-{'0' * 64}"}}, 9),
    ]
    (stream_dir / "blobs" / f"sha256-{'0' * 64}.md").write_text("tampered")
    stream = stream_dir / "ses_01KXKDN96K7VM8NGCZNM4J7VTG.jsonl"
    stream.write_text("".join(json.dumps(event) + "\n" for event in events))
    report = run(project)
    assert (report.messages_added, report.malformed) == (6, 1)
    with Store.open(project) as store:
        session = "ses_01KXKDN96K7VM8NGCZNM4J7VTG"
        assert store.session(session).title == "Events work"
        messages = store.messages(session)
        assert [m.role for m in messages] == [
            "user",
            "assistant",
            "assistant",
            "assistant",
            "user",
            "user",
        ]
        assert messages[1].parts == (
            ToolPart("Edit", {"description": "Edit models"}, "ok", call_id=events[2]["id"]),
        )
        assert messages[2].parts == (TextPart(long_text),)
        assert messages[3].parts == (TextPart("committed 3f9a1c0d2b Soft delete"),)
        assert messages[4].parts == (TextPart("[METADATA-ONLY]", ignored=True),)
        # A blob whose content does not match its name is not trusted (docs/chronicle-contract.md).
        assert messages[5].parts == (
            TextPart(f"[blob sha256-{'0' * 64} does not match its hash]", ignored=True),
        )
        assert store.files(session, 2) == [("apps/events/models.py", "edit")]
    assert run(project).messages_added == 0


def test_from_folder_sniffs_each_file(project, tmp_path):
    folder = tmp_path / "exports"
    (folder / "nested").mkdir(parents=True)
    (folder / "a.jsonl").write_text(
        json.dumps({"session": "g", "role": "user", "text": "hi"}) + "\n"
    )
    event = chronicle_event("PromptSubmitted", {"text": "hello"}, 1, session="ses_X")
    (folder / "nested" / "b.jsonl").write_text(json.dumps(event) + "\n")
    (folder / "notes.txt").write_text("not a transcript")
    (folder / "empty.jsonl").write_text("")
    report = run(project, [str(folder)])
    kinds = sorted((Path(f.path).name, f.kind) for f in report.files)
    assert kinds == [("a.jsonl", "generic"), ("b.jsonl", "chronicle"), ("empty.jsonl", None)]
    assert report.messages_added == 2


def test_from_a_missing_path_is_an_error(project, tmp_path):
    with pytest.raises(IngestError) as error:
        run(project, [str(tmp_path / "nope")])
    assert str(error.value) == (
        f"no such transcript file or folder: {tmp_path / 'nope'}; "
        f"pass an existing file or folder to --from"
    )


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal(project, monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    install_fixture(project)
    quiet = io.StringIO()
    run(project, stream=quiet)
    assert quiet.getvalue() == ""
    path = session_file(project)
    path.write_text(path.read_text() + "\n")  # grow so there is work to show
    terminal = FakeTerminal()
    run(project, stream=terminal)
    assert "ingest [" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\x1b[K")


def test_iter_lines_streams_in_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "BLOCK_SIZE", 7)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 40)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"alpha\nbeta-gamma-delta\n" + b"x" * 100 + b"\nlast\ntorn")
    with path.open("rb") as handle:
        got = list(reader.iter_lines(handle, 0))
    assert got == [
        (b"alpha", 6),
        (b"beta-gamma-delta", 23),
        (reader.OVERSIZED, 124),
        (b"last", 129),
    ]
    with path.open("rb") as handle:
        assert list(reader.iter_lines(handle, 23)) == got[2:]


def _generic_transcript(path: Path, megabytes: float) -> int:
    """Write a generic JSONL transcript of about ``megabytes`` MB; return its line count."""
    target = int(megabytes * 1_000_000)
    written = lines = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < target:
            role = "user" if lines % 2 == 0 else "assistant"
            line = json.dumps(
                {
                    "session": "s-1",
                    "role": role,
                    "id": f"m-{lines}",
                    "text": f"turn {lines}: refactor views/page_{lines % 97}.py " + "x" * 300,
                    "tools": [
                        {
                            "name": "Edit",
                            "id": f"call-{lines}",
                            "input": {"file_path": f"v/p{lines % 97}.py"},
                            "output": "ok",
                        }
                    ]
                    if role == "assistant"
                    else [],
                }
            )
            handle.write(line + "\n")
            written += len(line) + 1
            lines += 1
    return lines


def test_ingest_memory_does_not_grow_with_file_size(project, tmp_path):
    import tracemalloc

    peaks = []
    for megabytes in (1, 4):
        root = tmp_path / f"p{megabytes}"
        root.mkdir()
        (root / "manage.py").write_text("")
        path = tmp_path / f"t{megabytes}.jsonl"
        lines = _generic_transcript(path, megabytes)
        tracemalloc.start()
        try:
            report = run(root, [str(path)])
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert report.files[0].lines == lines and report.files[0].malformed == 0
    # Four times the transcript (and its message and call ids), the same Python heap: the
    # 1 MB read block and the 512 most recent messages dominate.
    assert peaks[1] < peaks[0] * 1.08 + 64_000, peaks


def test_evicted_ids_are_found_in_the_store(project, monkeypatch):
    # The writer keeps only recent messages (and their ids) in memory; older ids
    # are looked up in the store, within the same run, so memory stays flat.
    from karni_historian.ingest import sink

    monkeypatch.setattr(sink, "_CACHE_LIMIT", 2)
    with Store.open(project, create=True) as store, store.transaction():
        writer = sink.Sink(store, str(project)).session("s", "generic")
        for n in range(1, 11):
            part = {"type": "tool", "name": "Edit", "input": {}, "call_id": f"c{n}"}
            ordinal = writer.append("assistant", [part], message_id=f"m{n}")
            writer.record_call(f"c{n}", ordinal)
        assert len(writer._ids) <= 3 and len(writer._calls) <= 3
        assert writer.find("m1") == 1 and writer.find("m7") == 7
        assert writer.find("unknown") is None
        assert writer.answer("c2", "done", False) == (
            {"type": "tool", "name": "Edit", "call_id": "c2", "copy_of": 2},
            (2, {**part, "call_id": "c2", "output": "done"}),
        )
        writer.sink.flush()
        [message] = store.messages("s", 2, 2)
    assert message.parts[0].output == "done"


def test_a_tiny_cache_gives_the_same_store(project, tmp_path, monkeypatch):
    # Evicted messages and their ids are found again in the store within one run.
    from karni_historian.ingest import sink

    install_fixture(project)
    run(project)
    with Store.open(project) as store:
        expected = store.messages(SESSION)
        expected_files = [store.files(SESSION, m.ordinal) for m in expected]
    other = tmp_path / "other"
    other.mkdir()
    (other / "manage.py").write_text("")
    monkeypatch.setattr(sink, "_CACHE_LIMIT", 2)
    text = session_file(project).read_text().replace(str(project), str(other))
    path = tmp_path / "copy" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    path.write_text(text)
    run(other, [str(path)])
    with Store.open(other) as store:
        got = store.messages(SESSION)
        assert [store.files(SESSION, m.ordinal) for m in got] == expected_files
    assert len(got) == len(expected) == 32
    assert [repr(m).replace(str(other), str(project)) for m in got] == [repr(m) for m in expected]


def test_small_groups_ask_the_store_once_per_group(project, tmp_path, monkeypatch):
    # Record and response ids are looked up once per group of lines, never line by line,
    # and groups of any size give the same store.
    import karni_historian.ingest as ingest_module
    from karni_historian.ingest import sink

    install_fixture(project)
    run(project)
    with Store.open(project) as store:
        expected = [repr(m) for m in store.messages(SESSION)]
    other = tmp_path / "other"
    other.mkdir()
    (other / "manage.py").write_text("")
    text = session_file(project).read_text().replace(str(project), str(other))
    path = tmp_path / "copy" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    path.write_text(text)
    monkeypatch.setattr(ingest_module, "_GROUP_LINES", 3)
    monkeypatch.setattr(sink, "_CACHE_LIMIT", 2)
    calls = {"first_sighting": 0, "seen_among": 0, "ordinal_of_message_id": 0}
    for name in calls:
        original = getattr(Store, name)

        def counted(store, *args, _name=name, _original=original):
            calls[_name] += 1
            return _original(store, *args)

        monkeypatch.setattr(Store, name, counted)
    report = run(other, [str(path)])
    lines = report.files[0].lines
    assert calls["first_sighting"] == 0 and calls["ordinal_of_message_id"] == 0
    assert calls["seen_among"] == -(-lines // 3)
    with Store.open(other) as store:
        got = [repr(m).replace(str(other), str(project)) for m in store.messages(SESSION)]
    assert got == expected
