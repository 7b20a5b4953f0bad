import io
import json
import os
import sys
import time
from pathlib import Path

import pytest
from karni_historian.cli import main
from karni_historian.ingest.claude_code import project_key

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = "7d3e2a10-5c4b-4f1e-9a2d-3b8c6e1f0a42"


@pytest.fixture
def project(tmp_path, monkeypatch, user_folders):
    root = tmp_path / "shop-project"
    (root / "shop").mkdir(parents=True)
    (root / "manage.py").write_text("")
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(root / "shop")
    yield root
    monkeypatch.undo()  # TZ as it was before, then the zone read again
    time.tzset()


def install_fixture(root):
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / project_key(str(root))
    folder.mkdir(parents=True)
    text = (FIXTURES / "claude_code_session.jsonl").read_text(encoding="utf-8")
    (folder / f"{SESSION}.jsonl").write_text(text.replace("__PROJECT__", str(root)))


def cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_outside_a_project(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "sessions")
    assert (code, out) == (1, "")
    assert err == (
        f"karni-historian: no Karni project at or above {tmp_path}: looked for manage.py or "
        f"karni.rules.py; run inside a project or pass --project DIR\n"
    )


def test_usage_errors_are_one_line(project, capsys):
    code, out, err = cli(capsys, "frobnicate")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("karni-historian: unknown command `frobnicate`")
    assert err.endswith("; run `karni-historian --help` for usage\n")
    code, _, err = cli(capsys, "--project", "/nonexistent/x", "sessions")
    assert (code, err) == (
        2,
        "karni-historian: --project /nonexistent/x is not a directory; pass a project folder\n",
    )


def test_commands_before_ingest_say_what_to_do(project, capsys):
    code, out, err = cli(capsys, "status")
    assert code == 1 and out == ""
    assert err == (
        f"karni-historian: no historian store at {project}/.karni/local/historian.db; "
        f"run `karni-historian ingest` first\n"
    )


def test_ingest_sessions_and_second_run(project, capsys):
    install_fixture(project)
    code, out, err = cli(capsys, "ingest")
    assert (code, out, err) == (
        0,
        "ingested 1 of 1 transcript file(s): 32 new message(s) in 1 session(s)\n",
        "",
    )
    code, out, _ = cli(capsys, "ingest")
    assert out == "ingested 0 of 1 transcript file(s): 0 new message(s) in 0 session(s)\n"
    code, out, _ = cli(capsys, "sessions")
    assert out == (
        f"{SESSION}  claude-code  32 messages  0 compartments  2026-03-02T10:18:24.100Z  "
        f"Rename total helper to subtotal\n"
    )


def test_ingest_from_reports_malformed_lines(project, tmp_path, capsys):
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps({"session": "g", "role": "user", "text": "hi"}) + "\n{oops\n")
    code, out, err = cli(capsys, "ingest", "--from", str(export))
    assert code == 0
    assert out == (
        "ingested 1 of 1 transcript file(s): 1 new message(s) in 1 session(s); "
        "1 malformed line(s) skipped\n"
    )
    assert err == f"karni-historian: skipped 1 malformed line(s) in {export} (first at line 2)\n"
    code, out, err = cli(capsys, "ingest", "--from", str(tmp_path / "missing"))
    assert code == 2
    assert err == (
        f"karni-historian: no such transcript file or folder: {tmp_path / 'missing'}; "
        f"pass an existing file or folder to --from\n"
    )


def test_ingest_from_a_missing_path_creates_no_store(project, capsys, tmp_path):
    code, out, err = cli(capsys, "ingest", "--from", str(tmp_path / "missing"))
    assert (code, out) == (2, "")
    assert err.startswith("karni-historian: no such transcript file or folder: ")
    assert not (project / ".karni").exists()


def test_expand_one_message_in_full(project, capsys, snapshot_text):
    install_fixture(project)
    cli(capsys, "ingest")
    code, out, err = cli(capsys, "expand", "--message", "2")
    assert code == 0 and err == ""
    assert out.replace(str(project), "<PROJECT>") == snapshot_text
    code, out, _ = cli(capsys, "expand", "--message", "2", "--verbose", "--session", "7d3e")
    assert out.splitlines()[2:4] == [
        "  time: 2026-03-02T10:15:03.100Z",
        "  files: shop/cart.py (read)",
    ]
    code, out, err = cli(capsys, "expand", "--message", "99")
    assert code == 1
    assert err.startswith("karni-historian: No message at ordinal 99 in this session's stored")


def test_expand_range(project, capsys, snapshot_text):
    install_fixture(project)
    cli(capsys, "ingest")
    code, out, _err = cli(capsys, "expand", "1", "12")
    assert code == 0
    assert out.replace(str(project), "<PROJECT>") == snapshot_text
    assert out.startswith("Messages 1-12 (12 messages, ~")


def test_expand_range_verbose(project, capsys, snapshot_text):
    install_fixture(project)
    cli(capsys, "ingest")
    code, out, _err = cli(capsys, "expand", "--verbose", "7", "13")
    assert code == 0
    assert out.replace(str(project), "<PROJECT>") == snapshot_text


def test_expand_argument_errors(project, capsys):
    install_fixture(project)
    cli(capsys, "ingest")
    usage = (
        "karni-historian: provide either --message N, or START and END (positive integers, "
        "START <= END); run `karni-historian expand --help` for usage\n"
    )
    for args in (["5"], ["5", "2"], ["--message", "3", "1", "2"]):
        assert cli(capsys, "expand", *args)[::2] == (2, usage)
    assert cli(capsys, "expand", "0", "2")[::2] == (
        2,
        "karni-historian: START must be a positive integer (got '0')\n",
    )
    _code, out, _ = cli(capsys, "expand", "40", "50")
    assert out == (
        "No messages found in range 40-50. The range may be outside this session's history.\n"
    )
    assert cli(capsys, "expand", "--session", "nope", "1", "2")[::2] == (
        1,
        "karni-historian: no session 'nope' in the store; run `karni-historian sessions` "
        "to list them\n",
    )


def test_status_render_and_brief_before_wrapup(project, capsys):
    install_fixture(project)
    cli(capsys, "ingest")
    _code, out, _ = cli(capsys, "status")
    assert out == (
        f"Session {SESSION} (claude-code): Rename total helper to subtotal\n"
        "- Raw messages: 32 (32 after the last compartment)\n"
        "- Historian: not run yet\n"
        "- Chain (claude_code): local/extractive (default)\n"
        "- two_pass: off (default)\n"
        "- Chain note: no model is configured\n"
        "- Trigger: none fires (the newest five prompts and their answers stay raw)\n"
        "- Last run: none yet\n"
        "- History rebuilt: never; pending: first render\n"
        "\n"
        "### History Compression\n"
        "- Compartments: 0\n"
        "- History block: ~10 tokens\n"
        "- History budget: ~19500 tokens (0% used)\n"
        "- Older compartments demote tiers automatically at render time to fit the budget\n"
    )
    assert cli(capsys, "render")[:2] == (0, "<session-history></session-history>\n")
    assert cli(capsys, "render", "--budget", "lots")[::2] == (
        2,
        "karni-historian: --budget must be a positive integer (got 'lots')\n",
    )
    # Before any wrapup, the file's notes and the requests that edited it are its history.
    code, out, err = cli(capsys, "brief", "cart.py")
    assert (code, err) == (0, "")
    assert out.startswith(
        "Tried here and failed or undone (do not repeat):\n- undone on request: adds `gift_card` — "
    )
    assert "- Renamed `total()` to `subtotal()` in shop/cart.py.\n" in out
    assert "What shaped this file, newest first:\n1. 2026-03-02 " in out
    assert '+1 \u22121 \u2014 "Rename the total() helper in cart.py to subtotal()"\n' in out
    assert cli(capsys, "brief", "README.md") == (
        0,
        "",
        "karni-historian: no history recorded for shop/README.md\n",
    )
    assert cli(capsys, "brief", "/etc/passwd")[::2] == (
        2,
        f"karni-historian: /etc/passwd lies outside the project {project}; pass a path inside it\n",
    )


def test_configuration_errors_exit_1(project, capsys):
    install_fixture(project)
    cli(capsys, "ingest")
    (project / ".karni" / "config.toml").write_text("[historian]\nhistory_budget_percentage = 2\n")
    code, out, err = cli(capsys, "render")
    assert code == 1 and out == ""
    assert err.startswith(
        f"karni-historian: configuration error: {project / '.karni' / 'config.toml'}: "
    )
    assert "`historian.history_budget_percentage` must be a number from 0.05 to 0.5, not 2" in err
    assert err.count("\n") == 1


def test_wrapup_argument(project, capsys):
    install_fixture(project)
    cli(capsys, "ingest")
    assert cli(capsys, "wrapup", "abc")[::2] == (
        2,
        "karni-historian: KEEP must be a positive integer (got 'abc')\n",
    )
    assert cli(capsys, "wrapup", "0")[0] == 2
    code, out, _ = cli(capsys, "wrapup", "40")
    assert (code, out) == (
        0,
        f"session {SESSION}: nothing to wrap up — only 32 messages above the last compartment\n",
    )


def test_session_choice(project, tmp_path, capsys):
    export = tmp_path / "two.jsonl"
    lines = [
        {"session": "alpha-1", "role": "user", "text": "old", "timestamp": "2026-01-01T00:00:00Z"},
        {"session": "alpha-2", "role": "user", "text": "new", "timestamp": "2026-02-01T00:00:00Z"},
    ]
    export.write_text("".join(json.dumps(line) + "\n" for line in lines))
    cli(capsys, "ingest", "--from", str(export))
    code, out, _ = cli(capsys, "sessions")
    assert [line.split()[0] for line in out.splitlines()] == ["alpha-2", "alpha-1"]
    assert cli(capsys, "expand", "--message", "1")[1].endswith("[text]\nnew\n")
    assert cli(capsys, "expand", "--session", "alpha-1", "--message", "1")[1].endswith("old\n")
    assert cli(capsys, "expand", "--session", "alpha", "--message", "1")[::2] == (
        1,
        "karni-historian: session prefix 'alpha' is ambiguous; give more of the id\n",
    )
    code, out, _ = cli(capsys, "wrapup")
    assert code == 0
    assert out.splitlines() == [
        "session alpha-1: nothing to wrap up — only 1 messages above the last compartment",
        "session alpha-2: nothing to wrap up — only 1 messages above the last compartment",
    ]


def test_expand_stops_at_the_15000_token_budget(tmp_path):
    from karni_historian.brief.expand import EXPAND_TOKEN_BUDGET, expand_range
    from karni_historian.condense.settings import Settings
    from karni_historian.model import TextPart
    from karni_historian.store import Store, parts_to_json

    assert EXPAND_TOKEN_BUDGET == 15_000
    (tmp_path / "manage.py").write_text("")
    with Store.open(tmp_path, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            for ordinal in range(1, 11):
                role = "user" if ordinal % 2 else "assistant"
                text = f"message {ordinal} " + "word " * 2000  # ~2,900 tokens each
                store.write_message("s", ordinal, role, parts_to_json([TextPart(text)]))
        compact = expand_range(store, "s", 1, 10, Settings())
        verbose = expand_range(store, "s", 1, 10, Settings(), verbose=True)
    assert compact.startswith("Messages 1-5 (5 messages, ~")
    assert compact.endswith(
        "\n\nTruncated after message 5: message 6 would pass the ~15000-token budget "
        "of one answer. Run `karni-historian expand --session s 6 10` for more."
    )
    assert "[6] U:" not in compact and "[5] U:" in compact
    # Verbose previews are short (200 characters a part), so all ten fit.
    assert verbose.startswith("Messages 1-10 (verbose). Recover any one in full with ")
    assert "Truncated" not in verbose and verbose.count("    • message ") == 10


def test_expand_reads_every_message_and_prints_no_escapes(tmp_path):
    from karni_historian.brief.expand import expand_range, full_message
    from karni_historian.condense.settings import Settings
    from karni_historian.model import TextPart, ToolPart
    from karni_historian.store import Store, parts_to_json

    (tmp_path / "manage.py").write_text("")
    with Store.open(tmp_path, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            store.write_message("s", 1, "user", parts_to_json([TextPart("Run the tests")]))
            call = ToolPart("Bash", {"command": "pytest"}, call_id="c1")
            store.write_message("s", 2, "assistant", parts_to_json([call]))
            result = ToolPart("Bash", {}, output="\x1b[31m1 failed\x1b[0m\x07", call_id="c1")
            store.write_message("s", 3, "user", parts_to_json([result]))
            noise = TextPart("<system-reminder>the harness speaking</system-reminder>")
            store.write_message("s", 4, "user", parts_to_json([noise]))
        whole = expand_range(store, "s", 1, 4, Settings())
        result_only = expand_range(store, "s", 3, 3, Settings())
        last = expand_range(store, "s", 4, 4, Settings())
        verbose = expand_range(store, "s", 1, 4, Settings(), verbose=True)
        full = full_message(store, "s", 3)
    assert "Truncated" not in whole
    assert "[3] A: TC: Bash" in result_only
    # A message the compact view keeps nothing of is still shown, part by part.
    assert last.startswith("Messages 4-4 (verbose).")
    assert "[4] U (user)" in last
    for text in (whole, result_only, last, verbose, full):
        assert not any(ord(c) < 32 and c != "\n" for c in text), text
    assert "1 failed" in full


def test_sessions_and_status_as_json(project, capsys):
    install_fixture(project)
    cli(capsys, "ingest")
    code, out, err = cli(capsys, "sessions", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "sessions": [
            {
                "id": SESSION,
                "source": "claude-code",
                "messages": 32,
                "compartments": 0,
                "last_message_at": "2026-03-02T10:18:24.100Z",
                "title": "Rename total helper to subtotal",
                "shared": False,
                "author": None,
            }
        ]
    }
    code, out, err = cli(capsys, "status", "--json")
    assert (code, err) == (0, "")
    status = json.loads(out)
    assert status["schema"] == 1
    assert status["session"] == {
        "id": SESSION,
        "source": "claude-code",
        "title": "Rename total helper to subtotal",
        "model": None,
        "shared": False,
        "author": None,
    }
    assert status["messages"] == {"raw": 32, "condensed_to": 0, "uncondensed": 32}
    assert status["compartments"] == 0
    assert status["history"] == {"tokens": 10, "budget": 19500}
    assert status["failures"] == {"streak": 0, "last_error": None, "latest_dump": None}


class _FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def _run_with_terminal_stderr(monkeypatch, *args):
    terminal = _FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "60")
    code = main(list(args))
    return code, terminal.getvalue()


def test_wrapup_and_ingest_show_progress_and_quiet_silences_it(project, monkeypatch, capsys):
    install_fixture(project)
    code, drawn = _run_with_terminal_stderr(monkeypatch, "-q", "ingest")
    assert (code, drawn) == (0, "")
    assert capsys.readouterr().out == ""
    code, drawn = _run_with_terminal_stderr(monkeypatch, "wrapup", "4")
    assert code == 0
    bar, erased, note = drawn.rpartition("\r\x1b[K")
    assert bar.startswith("\rwrapup [") and erased  # erased when done
    assert all(len(frame) <= 59 + len("\x1b[K") for frame in bar.split("\r") if frame)
    assert note == ""  # the cache-safe note is for -v only: it is no step to take
    code, drawn = _run_with_terminal_stderr(monkeypatch, "-v", "wrapup", "2")
    assert "a history rebuild is pending" in drawn.rpartition("\r\x1b[K")[2]
    assert "compartment" in capsys.readouterr().out


def test_ingest_verbose_names_each_file_and_its_message_counts(project, capsys):
    install_fixture(project)
    code, out, err = cli(capsys, "-v", "ingest")
    assert code == 0
    assert out == "ingested 1 of 1 transcript file(s): 32 new message(s) in 1 session(s)\n"
    path = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / project_key(str(project))
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"karni-historian: read {path / SESSION}.jsonl (claude-code): ")
    assert lines[0].endswith("): 32 new message(s) from 39 record(s)"), lines[0]
    code, out, err = cli(capsys, "ingest")
    assert (code, err) == (0, "")  # without -v, nothing per file


def test_quiet_and_verbose_may_follow_the_command(project, capsys):
    install_fixture(project)
    code, out, err = cli(capsys, "ingest", "-v")
    assert code == 0 and err.startswith("karni-historian: read ")
    code, out, err = cli(capsys, "wrapup", "4", "--quiet")
    assert (code, out, err) == (0, "", "")
    code, out, err = cli(capsys, "-q", "status", "-v")
    assert (
        code == 2
        and err == "karni-historian: -q and -v ask for less and for more; pass one of them\n"
    )


def test_recomp_shows_progress_and_quiet_silences_it(project, monkeypatch, capsys):
    install_fixture(project)
    assert main(["-q", "ingest"]) == 0
    assert main(["-q", "wrapup", "4"]) == 0
    code, drawn = _run_with_terminal_stderr(monkeypatch, "recomp")
    assert code == 0
    bar, erased, rest = drawn.rpartition("\r\x1b[K")
    assert bar.startswith("\rrecomp [") and erased and rest == ""
    assert "rebuilt" in capsys.readouterr().out
    code, drawn = _run_with_terminal_stderr(monkeypatch, "-q", "recomp")
    assert (code, drawn) == (0, "")


def test_a_session_of_another_project_read_with_from_is_refused_unless_accepted(
    project, tmp_path, capsys
):
    elsewhere = tmp_path / "other-project"
    text = (FIXTURES / "claude_code_session.jsonl").read_text(encoding="utf-8")
    transcript = tmp_path / "their-session.jsonl"
    transcript.write_text(text.replace("__PROJECT__", str(elsewhere)))
    code, out, err = cli(capsys, "ingest", "--from", str(transcript))
    assert code == 1
    assert err == (
        f"karni-historian: did not read {transcript}: its session ran in {elsewhere}, outside "
        "this project; pass --accept-other-project if it belongs here\n"
    )
    assert "0 new message(s) in 0 session(s)" in out
    assert cli(capsys, "sessions", "--json")[1].count('"id"') == 0  # nothing of it stored
    code, out, _ = cli(capsys, "ingest", "--from", str(transcript), "--accept-other-project")
    assert code == 0 and "in 1 session(s)" in out


def test_session_may_come_before_the_command_and_status_shows_every_session(project, capsys):
    install_fixture(project)
    assert cli(capsys, "-q", "ingest")[0] == 0
    code, one, _ = cli(capsys, "--session", SESSION[:8], "status")
    assert code == 0 and one.startswith(f"Session {SESSION} ")
    assert cli(capsys, "status", "--session", SESSION[:8])[1] == one
    code, _, err = cli(capsys, "--session", SESSION[:8], "ingest")
    assert code == 2 and "ingest takes no --session" in err
    text = (FIXTURES / "claude_code_session.jsonl").read_text(encoding="utf-8")
    other = "0c1d2e3f-0000-4000-8000-000000000001"
    second = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / project_key(str(project))
    (second / f"{other}.jsonl").write_text(
        text.replace("__PROJECT__", str(project)).replace(SESSION, other)
    )
    assert cli(capsys, "-q", "ingest")[0] == 0
    code, both, _ = cli(capsys, "status")
    assert code == 0
    assert {line.split()[1] for line in both.splitlines() if line.startswith("Session ")} == {
        SESSION,
        other,
    }
    assert json.loads(cli(capsys, "status", "--json")[1])["schema"] == 1  # one session, as before
