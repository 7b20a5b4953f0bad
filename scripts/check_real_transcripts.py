"""Run karni-historian's readers on the real transcripts in ../shared/data/real-transcripts/.

For a developer, not CI (``scripts/check-real-transcripts`` runs it): the folder
holds public transcripts written by Claude Code, Pi and OpenCode, not by this
project, so they are not test fixtures. Each transcript is installed where its
harness keeps it, for a temporary project whose path replaces the recorded
one, and the real ``karni-historian`` command ingests it twice. Then this
script counts from the raw files, on its own, what the store must hold and
compares:

- ingest exits 0 without a traceback, names no malformed line, and the second
  run adds nothing;
- one session per transcript (subagent files are not sessions);
- every human prompt is stored as a prompt, and nothing else is (no subagent
  prompt, no harness text);
- every tool call is stored;
- the set of files the edit tools changed (main thread and subagents) is the
  same;
- no output carries control characters.

Exit status 0 when every check passes, 1 otherwise; one line per check.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from session_fixtures import install_claude, install_opencode, install_pi, isolated_env, jsonl

HERE = Path(__file__).resolve().parent.parent
DATA = HERE.parent / "shared" / "data" / "real-transcripts"
HISTORIAN = HERE / ".venv" / "bin" / "karni-historian"
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
# Claude Code's local commands: they talk to the harness, not the model.
LOCAL = set(
    re.split(
        r"\s+",
        "add-dir agents bashes bug clear compact config context cost doctor exit export help hooks"
        " ide login logout mcp memory model permissions quit release-notes resume rewind status"
        " statusline terminal-setup theme todos upgrade usage vim",
    )
)
NOT_TYPED = re.compile(
    r"^\s*(<(local-command-|bash-|user-prompt-submit-hook|hook|task-notification|teammate-"
    r"|ide_|system-reminder|command-message)|\[Request interrupted by user|Caveat: The messages"
    r" below|This session is being continued)"
)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class Expected:
    """What a transcript holds, counted from its raw records."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.calls: set[str] = set()
        self.edited: set[str] = set()


def relative(path: str, cwd: str, root: str) -> str | None:
    full = os.path.normpath(os.path.join(cwd, path))
    return full[len(root) + 1 :] if full.startswith(root + os.sep) else None


# --- Claude Code ------------------------------------------------------------------------


def claude_prompt(record: dict) -> str | None:
    if record.get("isSidechain") or record.get("isMeta") or record.get("isCompactSummary"):
        return None
    if record.get("toolUseResult") is not None:
        return None
    content = record["message"].get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if any(block.get("type") == "tool_result" for block in blocks):
        return None
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    for text in texts:
        name = re.search(r"<command-name>/?(.*?)</command-name>", text)
        if name:
            args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
            if name.group(1) in LOCAL:
                return None
            return f"/{name.group(1)} {args.group(1).strip() if args else ''}".strip()
        text = re.sub(r"<system-reminder>.*?</system-reminder>", "", text, flags=re.S).strip()
        if text and not NOT_TYPED.match(text):
            return text
    return None


def claude_edit(record: dict, block: dict, call: tuple[str, dict], root: str) -> str | None:
    """The project file a successful edit-tool call changed, from its result record."""
    name, tool_input = call
    failed = block.get("is_error") or isinstance(record.get("toolUseResult"), str)
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if name not in EDIT_TOOLS or failed or not raw:
        return None
    return relative(raw, record.get("cwd", root), root)


def claude_expected(files: list[Path], root: str) -> Expected:
    expected = Expected()
    calls: dict[str, tuple[str, dict]] = {}
    for path in files:
        records = [r for r in jsonl(path) if isinstance(r.get("message"), dict)]
        first = next((r for r in records if r.get("type") == "user"), None)
        if first and first.get("isSidechain") and first["message"].get("content") == "Warmup":
            continue
        for record in records:
            if record.get("type") == "user":
                prompt = claude_prompt(record) if path is files[0] else None
                expected.prompts += [prompt] if prompt else []
                for block in _blocks(record):
                    call = calls.get(block.get("tool_use_id", ""))
                    edited = claude_edit(record, block, call, root) if call else None
                    if block.get("type") == "tool_result" and edited:
                        expected.edited.add(edited)
            elif (
                record.get("type") == "assistant"
                and record["message"].get("model") != "<synthetic>"
            ):
                for block in _blocks(record):
                    if block.get("type") == "tool_use":
                        expected.calls.add(block["id"])
                        calls[block["id"]] = (block["name"], block.get("input") or {})
    return expected


def _blocks(record: dict) -> list[dict]:
    content = record["message"].get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def claude_cases() -> list[tuple[str, str, list[Path]]]:
    """``(name, recorded project path, [session file, its subagent files…])``."""
    cases = []
    for path in sorted(DATA.rglob("*.jsonl")):
        if path.name.startswith("agent-"):
            continue
        records = jsonl(path)
        if not any("sessionId" in r and "parentUuid" in r for r in records[:50]):
            continue
        cwds = {r["cwd"] for r in records if isinstance(r.get("cwd"), str)}
        agents = [
            agent
            for agent in sorted(path.parent.glob("agent-*.jsonl"))
            + sorted(path.parent.glob(f"{path.stem}/subagents/**/agent-*.jsonl"))
            if any(r.get("sessionId") == path.stem for r in jsonl(agent)[:5])
        ]
        cases.append((f"claude-code {path.name}", min(cwds, key=len), [path, *agents]))
    return cases


# --- Pi -------------------------------------------------------------------------------------


def pi_cases() -> list[tuple[str, str, list[Path]]]:
    cases = []
    for path in sorted(DATA.rglob("*.jsonl")):
        records = jsonl(path)[:1]
        if records and records[0].get("type") == "session" and "cwd" in records[0]:
            cases.append((f"pi {path.name}", records[0]["cwd"], [path]))
    return cases


def pi_expected(files: list[Path], root: str) -> Expected:
    expected = Expected()
    calls: dict[str, dict] = {}
    for record in jsonl(files[0]):
        message = record.get("message") if record.get("type") == "message" else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if message.get("role") == "user":
            texts = [b["text"] for b in blocks if b.get("type") == "text" and b["text"].strip()]
            expected.prompts += texts
        for block in blocks if message.get("role") == "assistant" else ():
            if block.get("type") == "toolCall":
                expected.calls.add(block["id"])
                calls[block["id"]] = block
        call = calls.get(message.get("toolCallId", ""))
        if message.get("role") == "toolResult" and call and not message.get("isError"):
            path = (call.get("arguments") or {}).get("path")
            if call["name"] in ("edit", "write") and path:
                rel = relative(path, root, root)
                if rel:
                    expected.edited.add(rel)
    return expected


# --- OpenCode -------------------------------------------------------------------------------


def opencode_cases() -> list[tuple[str, str, list[Path]]]:
    cases = []
    for storage in sorted(DATA.rglob("storage")):
        sessions = sorted((storage / "session").glob("*/*.json"))
        if sessions:
            directory = json.loads(sessions[0].read_text())["directory"]
            cases.append((f"opencode {storage.relative_to(DATA)}", directory, [storage]))
    return cases


def opencode_expected(files: list[Path], root: str) -> Expected:
    expected = Expected()
    storage = files[0]
    children = set()
    for path in (storage / "session").glob("*/*.json"):
        if json.loads(path.read_text()).get("parentID"):
            children.add(path.stem)
    for message_path in sorted((storage / "message").glob("*/*.json")):
        info = json.loads(message_path.read_text())
        parts = [
            json.loads(p.read_text())
            for p in sorted((storage / "part" / info["id"]).glob("*.json"))
        ]
        child = message_path.parent.name in children
        for part in parts:
            typed = not part.get("synthetic") and not part.get("ignored")
            if info["role"] == "user" and not child and part.get("type") == "text" and typed:
                expected.prompts += [part["text"]] if part["text"].strip() else []
            if info["role"] == "assistant" and part.get("type") == "tool":
                expected.calls.add(part["callID"])
                state = part.get("state") or {}
                raw = (state.get("input") or {}).get("filePath")
                done = state.get("status") == "completed"
                rel = relative(raw, root, root) if raw else None
                if part["tool"] in ("edit", "write") and done and rel:
                    expected.edited.add(rel)
    return expected


# --- running and comparing --------------------------------------------------------------


def historian(args: list[str], root: str, env: dict) -> tuple[int, str, str]:
    done = subprocess.run(
        [str(HISTORIAN), *args], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    return done.returncode, done.stdout, done.stderr


def stored(root: str) -> tuple[list[str], dict[str, Expected]]:
    connection = sqlite3.connect(Path(root) / ".karni" / "local" / "historian.db")
    sessions = [row[0] for row in connection.execute("SELECT id FROM sessions")]
    found: dict[str, Expected] = {}
    for session in sessions:
        got = found[session] = Expected()
        rows = connection.execute(
            "SELECT role, parts_json FROM raw_messages WHERE session_id = ? ORDER BY ordinal",
            (session,),
        )
        for role, parts_json in rows:
            for part in json.loads(parts_json):
                if role == "user" and part["type"] == "text" and not part.get("ignored"):
                    got.prompts.append(part["text"])
                if role == "assistant" and part["type"] == "tool" and part.get("call_id"):
                    got.calls.add(part["call_id"])
        got.edited = {
            row[0]
            for row in connection.execute(
                "SELECT path FROM message_files WHERE session_id = ? AND action != 'read'",
                (session,),
            )
        }
    connection.close()
    return sessions, found


def run_commands(root: str, env: dict[str, str]) -> list[str]:
    """Ingest twice, then read the store back; the failures seen on the way."""
    failures: list[str] = []
    outputs: list[str] = []
    for attempt in (1, 2):
        code, out, err = historian(["ingest"], root, env)
        outputs += [out, err]
        if code != 0 or "Traceback" in err:
            failures.append(f"ingest run {attempt} exited {code}: {err.strip()[-300:]}")
        if "malformed" in out + err:
            failures.append(f"ingest run {attempt} reported malformed lines: {err.strip()}")
        if attempt == 2 and ": 0 new message(s)" not in out:
            failures.append(f"the second ingest added messages: {out.strip()}")
    for args in (["sessions"], ["status"], ["expand", "1", "5"]):
        outputs += historian(args, root, env)[1:]
    if any(CONTROL.search(text) for text in outputs):
        failures.append("an output carries control characters")
    return failures


def first_difference(got: list[str], expected: list[str]) -> str:
    pairs = enumerate(zip(got, expected, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(got), len(expected)))
    return (
        f"prompts differ from number {at + 1} on ({len(got)} stored, {len(expected)} "
        f"expected): {got[at : at + 1]!r:.200} != {expected[at : at + 1]!r:.200}"
    )


def compare(sessions: list[str], got: Expected, expected: Expected) -> list[str]:
    """What the store holds against what the raw files say it must."""
    failures: list[str] = []
    if len(sessions) != 1:
        failures.append(f"{len(sessions)} sessions stored, expected 1: {sessions}")
    if got.prompts != expected.prompts:
        failures.append(first_difference(got.prompts, expected.prompts))
    if got.calls != expected.calls:
        missing, extra = expected.calls - got.calls, got.calls - expected.calls
        failures.append(f"tool calls: {len(missing)} missing, {len(extra)} extra")
    if got.edited != expected.edited:
        failures.append(
            f"edited files: missing {sorted(expected.edited - got.edited)}, "
            f"extra {sorted(got.edited - expected.edited)}"
        )
    return failures


def check_case(name: str, recorded: str, files: list[Path], harness: str) -> list[str]:
    """Install one transcript for a fresh project, run the commands, compare; print a line."""
    install, count = {
        "claude-code": (install_claude, claude_expected),
        "pi": (install_pi, pi_expected),
        "opencode": (install_opencode, opencode_expected),
    }[harness]
    with tempfile.TemporaryDirectory(prefix="karni-real-") as work:
        root = os.path.join(work, "project")
        os.makedirs(root)
        Path(root, "manage.py").write_text("")
        env = isolated_env(work)
        install(files, recorded, root, env)
        failures = run_commands(root, env)
        sessions, found = stored(root)
        expected = count(files, recorded)
        expected.prompts = [prompt.replace(recorded, root) for prompt in expected.prompts]
        got = found[sessions[0]] if sessions else Expected()
        failures += compare(sessions, got, expected)
    summary = (
        f"{len(expected.prompts)} prompt(s), {len(expected.calls)} tool call(s), "
        f"{len(expected.edited)} edited file(s)"
    )
    print(f"{'FAIL' if failures else 'ok  '} {name}: {summary}")
    for failure in failures:
        print(f"     - {failure}")
    return failures


def main() -> int:
    if not DATA.is_dir():
        print(f"no real transcripts at {DATA}; nothing to check")
        return 0
    failed = 0
    for harness, cases in (
        ("claude-code", claude_cases()),
        ("pi", pi_cases()),
        ("opencode", opencode_cases()),
    ):
        for name, recorded, files in cases:
            failed += bool(check_case(name, recorded, files, harness))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
