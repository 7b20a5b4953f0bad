"""Codex CLI, Gemini CLI, Oh My Pi and Aider, each from fixtures in its real format.

The fixtures under ``fixtures/<harness>/`` are written by this project in each
harness's format (modelled on the harnesses' source and public session files),
with their oddities: Codex's two rollout layouts, a fork and a subagent that
copy their parent's records, a patch that fails to apply; Gemini CLI's
rewritten messages, ``$set`` and ``$rewindTo`` records, the legacy JSON file
and both project-folder schemes; OMP's title slot and subagent file; Aider's
failed SEARCH block, reflection and edit formats. ``__PROJECT__`` stands for
the project root. Each is read by a plain ``ingest`` from where the harness
keeps it (through its environment variable), then checked the way
``test_ingest_harnesses`` checks the others.
"""

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from karni_historian.cli import main
from karni_historian.condense.work_phases import commit_of
from karni_historian.ingest import ingest
from karni_historian.ingest.codex_calls import shell_result
from karni_historian.ingest.gemini import shell_output
from karni_historian.ingest.omp import folder_names
from karni_historian.model import TextPart, ToolPart
from karni_historian.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
CODEX_MAIN = "019cae0b-44a0-7000-88aa-1bbab2a035a5"
CODEX_FORK = "019cae34-7780-7000-89bb-2ccbc3b146b6"
CODEX_CHILD = "019cae22-2800-7000-87cc-3ddcd4c257c7"
CODEX_OLD = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
GEMINI_MAIN = "3f2a9c1d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"
GEMINI_SUB = "9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
GEMINI_OLD = "1a2b3c4d-0e9f-4d8c-b7a6-5f4e3d2c1b0a"
OMP = "6d1e2f3a4b5c6d7e"
OMP_CHILD = "a1b2c3d4e5f60718"


@pytest.fixture
def project(tmp_path, monkeypatch, user_folders):
    root = tmp_path / "shop-project"
    root.mkdir()
    (root / "manage.py").write_text("")
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.chdir(root)
    return root


def _placed(text: str, root: Path, **more: str) -> str:
    for key, value in more.items():
        text = text.replace(f"__{key}__", value)
    return text.replace("__PROJECT__", str(root))


def run(root, sources=None):
    with Store.open(root, create=True) as store:
        return ingest(store, root, sources)


def check_twice(root, sources=None):
    first = run(root, sources)
    assert first.malformed == 0, first.warnings()
    assert first.warnings() == []
    assert first.messages_added > 0
    second = run(root, sources)
    assert (second.messages_added, second.malformed) == (0, 0)
    assert [f.path for f in second.files if f.lines] == []  # nothing read again
    return first


class Stored:
    def __init__(self, root: Path) -> None:
        with Store.open(root) as store:
            self.sessions = {s.id: s for s in store.sessions()}
            self.messages = {sid: store.messages(sid) for sid in self.sessions}
            self.files = store.connection.execute(
                "SELECT session_id, ordinal, path, action FROM message_files"
            ).fetchall()

    def prompts(self, session_id):
        return [
            part.text
            for message in self.messages[session_id]
            if message.role == "user"
            for part in message.parts
            if isinstance(part, TextPart) and not part.ignored
        ]

    def ignored(self, session_id):
        return [
            part.text
            for message in self.messages[session_id]
            for part in message.parts
            if isinstance(part, TextPart) and part.ignored
        ]

    def calls(self, session_id):
        return {
            part.call_id: part
            for message in self.messages[session_id]
            for part in message.parts
            if isinstance(part, ToolPart) and part.call_id and message.role == "assistant"
        }

    def touched(self, session_id):
        return {(p, a) for s, _, p, a in self.files if s == session_id}


def brief(root, path, capsys):
    capsys.readouterr()
    assert main(["brief", path]) == 0
    return capsys.readouterr().out


# -- Codex CLI -------------------------------------------------------------------------------


def install_codex(root: Path) -> Path:
    """The rollouts in ``$CODEX_HOME/sessions/YYYY/MM/DD/``, as Codex files them."""
    home = Path(os.environ["CODEX_HOME"])
    for path in sorted((FIXTURES / "codex").iterdir()):
        day = path.name[len("rollout-") :][:10].split("-")
        folder = home / "sessions" / day[0] / day[1] / day[2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / path.name).write_text(_placed(path.read_text(encoding="utf-8"), root))
    return home


def test_codex_rollouts_of_both_layouts_forks_and_a_subagent(project, capsys):
    home = install_codex(project)
    other = home / "sessions" / "2026" / "03" / "02" / "rollout-2026-03-02T09-00-00-other.jsonl"
    meta = {"id": "other", "cwd": "/elsewhere/app", "originator": "codex_cli_rs"}
    other.write_text(json.dumps({"timestamp": "t", "type": "session_meta", "payload": meta}) + "\n")
    check_twice(project)
    stored = Stored(project)
    assert set(stored.sessions) == {CODEX_MAIN, CODEX_FORK, CODEX_OLD}  # the subagent is not one
    assert {s.source for s in stored.sessions.values()} == {"codex"}
    assert stored.prompts(CODEX_MAIN) == [
        "Add a discount(items, percent) helper to cart.py next to total(), and make sure the "
        "cart tests still pass.",
        "No: discounts must never apply to gift cards, skip items where item.gift_card is "
        "true. And don't change test_total, it is flaky because of float rounding; round "
        "discount() to cents instead.",
        "Have a subagent document discount() in README.md while I review.",
    ]
    # The subagent's task was written by the parent model; the fork's copy of its parent is skipped.
    assert stored.ignored(CODEX_MAIN) == ["Document discount() in README.md: one short paragraph."]
    assert stored.prompts(CODEX_FORK) == ["Rename discount() to apply_discount() everywhere."]
    assert stored.prompts(CODEX_OLD) == ["Document the cart module in README.md"]
    assert stored.sessions[CODEX_MAIN].title == "Cart discount helper"

    calls = stored.calls(CODEX_MAIN)
    assert calls["call_Pq7AddDiscount"].name == "apply_patch"
    assert calls["call_Pq7AddDiscount"].metadata is None
    assert calls["call_Mw1RoundCents"].is_error  # verification failed: nothing changed
    assert calls["call_Zt3RunTests"].is_error and "1 failed" in calls["call_Zt3RunTests"].output
    assert calls["call_Zt3RunTests"].input["command"] == "python -m pytest -q"
    assert calls["call_Zt3RunTests"].metadata == {"tool": "exec_command"}
    assert not calls["call_Bn5Retest"].is_error
    assert not calls["call_Zt3RunTests"].output.startswith("Chunk ID")  # the envelope is gone
    assert commit_of(calls["call_Cv6Commit"]) == ("4f1c2d9", "Add discount() that skips gift cards")
    assert calls["call_Rd9Readme"].metadata == {"subagent": "call_Sp8Spawn"}
    assert stored.touched(CODEX_MAIN) == {
        ("cart.py", "edit"),
        ("tests/test_discount.py", "create"),
        ("README.md", "edit"),
    }
    old = stored.calls(CODEX_OLD)
    assert old["call_legacy_patch"].name == "apply_patch"  # apply_patch through the shell
    assert old["call_legacy_cat"].input == {"command": "cat README.md", "workdir": str(project)}
    assert old["call_legacy_ls"].input == {"command": "ls -la"}
    assert stored.touched(CODEX_OLD) == {("README.md", "edit")}
    assert stored.touched(CODEX_FORK) == set()

    shaped = brief(project, "cart.py", capsys)
    assert '+3 −1 — "No: discounts must never apply to gift cards' in shaped
    assert '+5 −0 — "Add a discount(items, percent) helper' in shaped


def test_codex_reads_only_new_records_and_an_archived_rollout_adds_nothing(project):
    home = install_codex(project)
    run(project)
    [path] = (home / "sessions").rglob(f"*{CODEX_MAIN}.jsonl")
    long_output = "x" * (3 << 20)
    record = {
        "timestamp": "2026-03-02T10:50:00.000Z",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "call_late", "output": long_output},
    }
    turn = {"timestamp": "2026-03-02T10:49:00.000Z", "type": "event_msg"}
    turn["payload"] = {"type": "user_message", "message": "print the build log"}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(turn) + "\n" + json.dumps(record) + "\n")
    report = run(project)
    assert report.messages_added == 2 and report.malformed == 0
    [read] = [f for f in report.files if f.lines]
    assert read.lines == 2
    archived = home / "archived_sessions"
    archived.mkdir()
    shutil.move(path, archived / path.name)
    moved = run(project)
    assert moved.messages_added == 0 and [f.path for f in moved.files if f.lines]


def test_codex_from_a_file_and_shell_outputs():
    assert shell_result('{"output":"ok\\n","metadata":{"exit_code":2}}') == ("ok\n", 2, True)
    text = "Chunk ID: a\nWall time: 1.0 seconds\nProcess exited with code 0\nOutput:\nfine\n"
    assert shell_result(text) == ("fine\n", 0, False)
    assert shell_result("Exit code: 1\nWall time: 0 seconds\nOutput:\nnope") == ("nope", 1, True)
    assert shell_result("aborted by user after 9.4s")[2]
    assert shell_result([{"type": "input_text", "text": "hi"}]) == ("hi", None, False)
    assert shell_result({"content": "err: boom", "success": False})[2]


def test_codex_with_from_names_the_harness(project, tmp_path):
    source = tmp_path / "one.jsonl"
    name = f"rollout-2026-03-02T11-15-00-{CODEX_MAIN}.jsonl"
    source.write_text(_placed((FIXTURES / "codex" / name).read_text(), project))
    report = check_twice(project, [str(source)])
    assert [f.kind for f in report.files] == ["codex"]
    assert Stored(project).sessions[CODEX_MAIN].source == "codex"


# -- Gemini CLI -------------------------------------------------------------------------------


def install_gemini(root: Path) -> Path:
    """The current session in the project's short-name folder, the legacy one in its hash folder."""
    gemini = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini"
    digest = hashlib.sha256(str(root).encode()).hexdigest()
    named = gemini / "tmp" / "shop-project"
    (named / "chats").mkdir(parents=True)
    (named / ".project_root").write_text(str(root))
    (gemini / "projects.json").write_text(json.dumps({"projects": {str(root): "shop-project"}}))
    hashed = gemini / "tmp" / digest / "chats"
    hashed.mkdir(parents=True)
    source = FIXTURES / "gemini"
    for path in sorted(source.rglob("*")):
        if path.is_file():
            folder = hashed if path.suffix == ".json" else named / "chats"
            target = folder / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = _placed(path.read_text(encoding="utf-8"), root, PROJECT_HASH=digest)
            target.write_text(text)
    return gemini


def test_gemini_sessions_in_both_folder_schemes_with_their_updates(project, capsys):
    gemini = install_gemini(project)
    stranger = gemini / "tmp" / hashlib.sha256(b"/elsewhere/app").hexdigest() / "chats"
    stranger.mkdir(parents=True)
    header = {"sessionId": "s-x", "projectHash": "h"}
    (stranger / "session-x.jsonl").write_text(json.dumps(header) + "\n")
    check_twice(project)
    stored = Stored(project)
    assert set(stored.sessions) == {GEMINI_MAIN, GEMINI_OLD}
    assert {s.source for s in stored.sessions.values()} == {"gemini"}
    assert stored.prompts(GEMINI_MAIN) == [
        "Add a --dry-run flag to cli.py that lists the orders it would ship without calling "
        "ship() @shipping.py",
        "Don't print(): use the module logger. And --dry-run must never touch the database, "
        "so skip save_order() as well.",
        "commit it",
        "also add a --verbose flag",  # rewound, yet said: history keeps it
    ]
    assert stored.ignored(GEMINI_MAIN) == ["Document --dry-run in README.md under 'Usage'."]
    assert stored.prompts(GEMINI_OLD) == [
        "ship() retries twice on a timeout; make it retry three times with backoff"
    ]
    assert stored.sessions[GEMINI_MAIN].title == "Dry-run flag for the shipping CLI"
    # A message recorded twice (its calls grew) is one message with both calls.
    [first] = [m for m in stored.messages[GEMINI_MAIN] if m.message_id == "5a6b7c8d-g1"]
    assert [p.name for p in first.parts] == ["read_file", "edit"]
    calls = stored.calls(GEMINI_MAIN)
    assert calls["replace-1772528470-d4"].is_error
    assert calls["replace-1772528470-d4"].metadata == {"tool": "replace"}
    assert calls["run_shell_command-1772528430-c3"].is_error
    assert calls["run_shell_command-1772528430-c3"].name == "shell"
    assert "Exit Code" not in calls["run_shell_command-1772528430-c3"].output
    assert not calls["run_shell_command-1772528500-g7"].is_error
    commit = calls["run_shell_command-1772528560-h8"]
    assert commit_of(commit) == (
        "7e3a91b",
        "cli: --dry-run lists orders without saving or shipping",
    )
    assert calls["replace-1772528705-s1"].metadata == {"tool": "replace", "subagent": GEMINI_SUB}
    assert stored.touched(GEMINI_MAIN) == {
        ("cli.py", "read"),
        ("cli.py", "edit"),
        ("tests/test_cli_dry_run.py", "create"),
        ("README.md", "edit"),
    }
    assert stored.touched(GEMINI_OLD) == {("shipping.py", "read"), ("shipping.py", "edit")}
    assert not any("state_snapshot" in repr(m) for m in stored.messages[GEMINI_MAIN])
    shaped = brief(project, "cli.py", capsys)
    assert "+2 −1 — \"Don't print(): use the module logger." in shaped
    assert '+3 −0 — "Add a --dry-run flag to cli.py' in shaped


def test_gemini_a_message_rewritten_later_is_replaced(project):
    gemini = install_gemini(project)
    run(project)
    [path] = (gemini / "tmp" / "shop-project" / "chats").glob("session-*.jsonl")
    record = {
        "id": "1a2b3c4d-g6",
        "timestamp": "2026-03-03T09:02:40.000Z",
        "type": "gemini",
        "content": [{"text": "Committed as 7e3a91b; pushed."}],
    }
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    report = run(project)
    assert report.messages_added == 0
    stored = Stored(project)
    [message] = [m for m in stored.messages[GEMINI_MAIN] if m.message_id == "1a2b3c4d-g6"]
    assert message.parts == (TextPart("Committed as 7e3a91b; pushed."),)


def test_gemini_from_the_legacy_file_and_shell_outputs(project, tmp_path):
    source = tmp_path / "session-2025-10-01T14-30-1a2b3c4d.json"
    text = (FIXTURES / "gemini" / source.name).read_text()
    source.write_text(_placed(text, project, PROJECT_HASH="h"))
    report = check_twice(project, [str(source)])
    assert [f.kind for f in report.files] == ["gemini-json"]
    assert Stored(project).prompts(GEMINI_OLD)
    old = "Command: ls\nDirectory: (root)\nOutput: a\nb\nError: (none)\nExit Code: 2\nSignal: x"
    assert shell_output(old) == ("a\nb", 2)
    assert shell_output("Output: (empty)") == ("", None)


# -- Oh My Pi ---------------------------------------------------------------------------------


def install_omp(root: Path, scheme: int = -1) -> Path:
    sessions = Path(os.environ["OMP_CODING_AGENT_DIR"]) / "sessions"
    folder = sessions / folder_names(str(root))[scheme]
    source = FIXTURES / "omp"
    for path in sorted(source.rglob("*.jsonl")):
        target = folder / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_placed(path.read_text(encoding="utf-8"), root, SESSIONS=str(folder)))
    return folder


@pytest.mark.parametrize("scheme", [0, -1], ids=["older --path-- folder", "newer -tmp- folder"])
def test_omp_sessions_are_omp_with_their_titles_and_subagent(project, scheme):
    folder = install_omp(project, scheme)
    check_twice(project)
    stored = Stored(project)
    assert list(stored.sessions) == [OMP]
    assert stored.sessions[OMP].source == "omp"
    assert stored.sessions[OMP].title == "Gift card balance at checkout"
    assert stored.prompts(OMP) == [
        "Check the gift card balance in checkout.py before placing the order, and reject the "
        "order when the balance is short.",
        "Never call the payments API from checkout validation: read the cached "
        "GiftCard.balance instead.",
        "Have a subagent add a test for a short balance.",
    ]
    assert stored.ignored(OMP) == ["Add tests/test_balance.py covering a short gift card balance."]
    calls = stored.calls(OMP)
    assert calls["toolu_omp_test1"].is_error
    assert calls["toolu_omp_sub_write"].metadata == {"subagent": OMP_CHILD}
    assert stored.touched(OMP) == {
        ("checkout.py", "read"),
        ("checkout.py", "edit"),
        ("tests/test_balance.py", "edit"),
    }
    # OMP rewrites its title slot in place: nothing is read again.
    [path] = folder.glob("*.jsonl")
    lines = path.read_text().split("\n")
    slot = json.loads(lines[0])
    slot["title"], slot["pad"] = "Balance", slot["pad"] + " " * (len(slot["title"]) - 7)
    lines[0] = json.dumps(slot, separators=(",", ":"))
    path.write_text("\n".join(lines))
    again = run(project)
    assert again.messages_added == 0 and [f for f in again.files if f.lines] == []


def test_omp_with_from_is_told_from_pi(project, tmp_path):
    source = tmp_path / f"2026-03-04T08-00-00-000Z_{OMP}.jsonl"
    text = (FIXTURES / "omp" / source.name).read_text()
    source.write_text(_placed(text, project, SESSIONS=str(tmp_path)))
    report = check_twice(project, [str(source)])
    assert [f.kind for f in report.files] == ["omp"]
    # Without the title slot, an OMP-only entry still tells it.
    plain = tmp_path / "plain.jsonl"
    plain.write_text("\n".join(source.read_text().split("\n")[1:]))
    (project / ".karni" / "local" / "historian.db").unlink()
    assert [f.kind for f in run(project, [str(plain)]).files] == ["omp"]


# -- Aider ------------------------------------------------------------------------------------


def install_aider(root: Path) -> Path:
    path = root / ".aider.chat.history.md"
    shutil.copyfile(FIXTURES / "aider" / ".aider.chat.history.md", path)
    return path


def test_aider_history_sessions_edits_and_commits(project, capsys):
    install_aider(project)
    check_twice(project)
    stored = Stored(project)
    assert len(stored.sessions) == 2
    first, second = sorted(stored.sessions)
    assert {s.source for s in stored.sessions.values()} == {"aider"}
    assert stored.prompts(first) == [
        "add a reserve(sku, qty) function to inventory.py that refuses to go below zero stock",
        "No, don't add a lock inside reserve(): the warehouse service already serialises calls "
        "per SKU. The test is wrong, make it call reserve() sequentially.",
    ]
    assert stored.ignored(first) == ["/add inventory.py"]
    assert stored.ignored(second) == ["/model gpt-5"]
    runs = [
        part
        for message in stored.messages[first]
        if message.role == "user"
        for part in message.parts
        if isinstance(part, ToolPart)
    ]
    assert [(p.name, p.input["command"], p.metadata["tool"]) for p in runs] == [
        ("shell", "python -m pytest -q", "/run"),
        ("shell", "python -m pytest -q", "/test"),
    ]
    assert "1 failed" in runs[0].output and "(Y)es" not in runs[0].output
    edits = [p for p in stored.calls(first).values()]
    assert [(p.name, p.input["file_path"], p.is_error) for p in edits] == [
        ("edit", "inventory.py", False),
        ("edit", "tests/test_inventory.py", True),  # its SEARCH block did not match
        ("edit", "tests/test_inventory.py", False),
    ]
    assert "failed to match" in edits[1].output
    texts = [p.text for m in stored.messages[first] for p in m.parts if isinstance(p, TextPart)]
    assert "Commit 5d3e1a7 feat: Add reserve() that refuses negative stock" in texts
    assert stored.touched(first) == {("inventory.py", "edit"), ("tests/test_inventory.py", "edit")}
    assert stored.touched(second) == {("CHANGELOG.md", "create"), ("inventory.py", "edit")}
    whole, patch = stored.calls(second).values()
    assert (whole.name, patch.name) == ("write", "patch")
    shaped = brief(project, "inventory.py", capsys)
    assert '+2 −1 — "make stock_level() return 0 for unknown SKUs' in shaped
    assert '+6 −0 — "add a reserve(sku, qty) function' in shaped


def test_aider_a_turn_that_grows_is_read_again_not_twice(project):
    path = install_aider(project)
    run(project)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n#### rename reserve() to hold()  \n\ninventory.py\n```python\n")
        handle.write("<<<<<<< SEARCH\ndef reserve(sku, qty):\n=======\ndef hold(sku, qty):\n")
        handle.write(">>>>>>> REPLACE\n```\n\n")
    report = run(project)
    assert report.messages_added == 2
    with path.open("a", encoding="utf-8") as handle:
        handle.write("> Applied edit to inventory.py  \n> Commit 3a4b5c6 refactor: hold()  \n")
    report = run(project)
    assert report.messages_added == 0  # the answer was replaced, with its outcome
    stored = Stored(project)
    second = sorted(stored.sessions)[1]
    [call] = [c for c in stored.calls(second).values() if "hold" in c.input.get("new_string", "")]
    assert not call.is_error
    assert stored.prompts(second)[-1] == "rename reserve() to hold()"


def test_aider_history_named_by_its_variable(project, monkeypatch, tmp_path):
    (project / "notes").mkdir()
    target = project / "notes" / "aider.md"
    shutil.copyfile(FIXTURES / "aider" / ".aider.chat.history.md", target)
    monkeypatch.setenv("AIDER_CHAT_HISTORY_FILE", "notes/aider.md")
    report = check_twice(project)
    assert [(Path(f.path).name, f.kind) for f in report.files] == [("aider.md", "aider")]
    outside = tmp_path / "elsewhere.md"
    shutil.copyfile(target, outside)
    monkeypatch.setenv("AIDER_CHAT_HISTORY_FILE", str(outside))
    assert [f.path for f in run(project).files] == []  # not the project's


def test_sessions_names_each_harness(project, capsys):
    install_codex(project)
    install_gemini(project)
    install_omp(project)
    install_aider(project)
    assert main(["ingest"]) == 0
    capsys.readouterr()
    assert main(["sessions"]) == 0
    harnesses = {line.split()[1] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert harnesses == {"codex", "gemini", "omp", "aider"}
