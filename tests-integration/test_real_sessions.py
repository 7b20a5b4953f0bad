"""The built-in historian on real sessions: each defect once seen on them stays fixed.

The public transcripts in ``../shared/data/real-transcripts/`` (their licences
in its ``SOURCES.md``) were written by Claude Code and Pi, not by this
project. Each test installs one where its harness keeps it, for a throwaway
project, and runs the real commands a user runs: a plain ``ingest``, a
``wrapup``, ``render``, ``brief`` and ``karni context --with-history``. A clean
clone without that folder skips them; the same behaviours are tested on
sessions written here in the packages' own tests
(``packages/karni-historian/tests/test_file_notes.py``, ``test_extractive.py``).
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from karni_historian.condense.file_notes.prompts import CONTINUATION, prompt_kind
from karni_it.workspace import ROOT
from session_fixtures import install, isolated_env

DATA = ROOT.parent / "shared" / "data" / "real-transcripts"
TODO_APP = DATA / "d-kimuson-claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
PI_THEMES = DATA / "badlogic-pi-mono" / "large-session.jsonl"
BIN = ROOT / ".venv" / "bin"
KEEP = 20

pytestmark = pytest.mark.skipif(
    not (TODO_APP.is_file() and PI_THEMES.is_file()),
    reason="the public transcripts of ../shared/data/real-transcripts/ are not on this machine",
)

QUOTED = re.compile(r'"[^"]*"|«[^»]*»')
"""The user's words quoted in a compartment or a brief: theirs to word as they like."""
NARRATION = re.compile(
    r"(?:^|[.!?] )(?:Now )?(?:let me|let's|I'll|I will|I'm going to)\b", re.IGNORECASE
)


@dataclass
class Installed:
    """A real session installed for a project, ingested, and wrapped up to :data:`KEEP`."""

    root: Path
    env: dict[str, str]
    wrapup: str

    def run(self, *args: str, program: str = "karni-historian") -> str:
        done = subprocess.run(
            [str(BIN / program), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        return done.stdout

    def query(self, sql: str) -> list[tuple]:
        with sqlite3.connect(self.root / ".karni" / "local" / "historian.db") as db:
            return db.execute(sql).fetchall()

    def edited(self, limit: int = 3) -> list[str]:
        """The files the session edited most often, most first."""
        rows = self.query(
            "SELECT path, count(*) FROM message_files WHERE action != 'read'"
            " GROUP BY path ORDER BY count(*) DESC, path LIMIT " + str(limit)
        )
        return [path for path, _count in rows]

    def typed(self) -> str:
        """Everything the user typed, lower-cased, spaces collapsed."""
        texts = []
        for (parts,) in self.query("SELECT parts_json FROM raw_messages WHERE role = 'user'"):
            texts += [p.get("text", "") for p in json.loads(parts) if isinstance(p, dict)]
        return " ".join(" ".join(texts).lower().split())

    def history_block(self, path: str) -> str:
        shown = self.run("context", "--with-history", path, program="karni")
        return shown.split("(historian)\n", 1)[1] if "(historian)\n" in shown else ""


def _installed(tmp_path_factory, harness: str, source: Path) -> Installed:
    work = tmp_path_factory.mktemp(harness)
    root = work / "project"
    root.mkdir()
    (root / "manage.py").write_text("")
    env = {**isolated_env(str(work)), "COLUMNS": "100"}
    install(harness, [source], str(root), env)
    session = Installed(root, env, "")
    session.run("-q", "ingest")
    session.wrapup = session.run("wrapup", str(KEEP))
    return session


@pytest.fixture(scope="module")
def todo_app(tmp_path_factory) -> Installed:
    """A 340-message Claude Code session: one prompt, an orchestrator and its subagents."""
    return _installed(tmp_path_factory, "claude-code", TODO_APP)


@pytest.fixture(scope="module")
def pi_themes(tmp_path_factory) -> Installed:
    """A 900-message Pi session: many short prompts, pasted terminal output, corrections."""
    return _installed(tmp_path_factory, "pi", PI_THEMES)


def test_wrapup_keep_leaves_that_many_messages_raw(todo_app):
    """``wrapup 20`` keeps the newest 20 messages raw, or a few fewer to end on a clean boundary."""
    kept = int(re.search(r"the newest (\d+) stay raw", todo_app.wrapup).group(1))
    assert KEEP - 3 <= kept <= KEEP
    (newest,) = todo_app.query("SELECT max(end_message) FROM compartments")[0]
    (total,) = todo_app.query("SELECT count(*) FROM raw_messages")[0]
    assert total - newest == kept
    assert f"Raw messages: {total} ({kept} after the last compartment)" in todo_app.run("status")


def test_one_prompt_of_work_is_split_into_episodes(todo_app):
    """Commits, finished todo items, subagents taking over and long runs of work end episodes."""
    spans = todo_app.query("SELECT start_message, end_message, title FROM compartments")
    assert len(spans) >= 8
    assert max(end - start + 1 for start, end, _title in spans) <= 80
    titles = [title for _start, _end, title in spans]
    assert "Setup Next.js project" in titles  # named by the subagent's task


@pytest.mark.parametrize("name", ["todo_app", "pi_themes"])
def test_no_narration_is_told_as_what_happened(request, name):
    """The agent's "Let me …" never becomes a title, a compartment's text or a brief's line."""
    session: Installed = request.getfixturevalue(name)
    typed = session.typed()
    for title, p1, p2 in session.query("SELECT title, p1, p2 FROM compartments"):
        words = " ".join(title.rstrip("…").lower().split())
        assert words in typed or not NARRATION.search(title), title  # a request may say "let me"
        for text in (p1, p2):
            assert not NARRATION.search(QUOTED.sub("", text)), text
    for path in session.edited():
        block = session.history_block(path)
        assert block, f"no brief for {path}, which the session edited"
        assert not NARRATION.search(QUOTED.sub("", block)), block


def test_a_continuation_names_the_request_it_continues(pi_themes):
    """A bare "continue" or "yeah, do it all" is never shown as the request that shaped a file."""
    typed = [row[0] for row in pi_themes.query("SELECT text FROM file_requests")]
    assert typed and not any(prompt_kind(text) == CONTINUATION for text in typed)
    quoted = re.compile(r'^\d+\. .* \u2014 "(.*?)(?:\u2026)?"$')
    for path in pi_themes.edited(8):
        for line in pi_themes.run("brief", path).splitlines():
            found = quoted.match(line)
            if found:
                assert prompt_kind(found.group(1)) != CONTINUATION, line
    titles = [row[0] for row in pi_themes.query("SELECT title FROM compartments")]
    assert not any(prompt_kind(title) == CONTINUATION for title in titles), titles


def test_promoted_facts_are_whole_sentences_without_pasted_output(pi_themes):
    """Facts carry no terminal output, no fragment, no chatter; a file's brief only its own."""
    facts = [row[0] for row in pi_themes.query("SELECT content FROM memories")]
    assert facts
    for fact in facts:
        assert not re.search(r"➜|git:\(|Debugger attached|\bnpx tsx\b", fact), fact
        assert fact[:1].isupper() or fact[:1] in "`\"'", fact
        assert len(fact.split()) >= 4, fact
        assert fact.count("`") % 2 == 0, fact
    theme = "packages/coding-agent/src/theme/theme.ts"
    block = pi_themes.history_block(theme)
    assert block
    assert "user-message-selector.ts" not in block


@pytest.mark.parametrize("name", ["todo_app", "pi_themes"])
def test_no_path_outside_the_project_is_shown(request, name):
    """A path inside the project is shown relative to it; any other is left out."""
    session: Installed = request.getfixturevalue(name)
    shown = [session.run("render"), session.run("brief", "--all")]
    shown += [session.history_block(path) for path in session.edited()]
    outside = re.compile(r"/Users/|/home/|~/|/tmp/|" + re.escape(str(session.root)))
    for text in shown:
        assert not outside.search(text), outside.search(text)


def test_oh_my_pi_sessions_are_found_and_recorded_as_omp(tmp_path):
    """A session kept in Oh My Pi's folder is found by a plain ingest and is OMP's, not Pi's."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "manage.py").write_text("")
    env = isolated_env(str(tmp_path))
    install(
        "pi", [PI_THEMES], str(root), {**env, "PI_CODING_AGENT_DIR": env["OMP_CODING_AGENT_DIR"]}
    )
    session = Installed(root, env, "")
    assert "900 new message(s) in 1 session(s)" in session.run("ingest")
    listed = json.loads(session.run("sessions", "--json"))["sessions"]
    assert [entry["source"] for entry in listed] == ["omp"]


@pytest.mark.parametrize("name", ["todo_app", "pi_themes"])
def test_search_finds_what_the_user_typed_and_expand_shows_it(request, name):
    """A rare word of the user's prompts is found, marked, and its hit's command shows it."""
    session: Installed = request.getfixturevalue(name)
    typed = [
        part.get("text", "")
        for (parts,) in session.query("SELECT parts_json FROM raw_messages WHERE role = 'user'")
        for part in json.loads(parts)
        if isinstance(part, dict) and part.get("type") == "text" and not part.get("ignored")
    ]
    words = re.findall(r"\b[a-z]{8,}\b", " ".join(typed).lower())
    word = min(set(words), key=lambda w: (words.count(w), w))
    found = json.loads(session.run("search", "--json", "--limit", "5", word))
    assert found["matched"] == "all" and found["hits"]
    prompts = [hit for hit in found["hits"] if hit["kind"] == "prompt"]
    assert prompts, found["hits"]
    assert f"**{word}**" in prompts[0]["snippet"].lower()
    command = prompts[0]["expand"].split()
    assert command[:2] == ["karni-historian", "expand"]
    assert word in session.run(*command[1:]).lower()


@pytest.mark.parametrize("name", ["todo_app", "pi_themes"])
def test_search_by_file_keeps_only_history_that_touched_it(request, name):
    session: Installed = request.getfixturevalue(name)
    edited = session.edited(1)
    if not edited:
        pytest.skip("the session edited no file")
    name_of = edited[0].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    everything = json.loads(session.run("search", "--json", "--limit", "50", "--tools", name_of))
    touched = json.loads(
        session.run("search", "--json", "--limit", "50", "--tools", "--file", edited[0], name_of)
    )
    assert touched["hits"] and len(touched["hits"]) <= len(everything["hits"])
    query = "SELECT count(*) FROM message_files WHERE path = ? AND session_id = ?"
    for hit in touched["hits"]:
        with sqlite3.connect(session.root / ".karni" / "local" / "historian.db") as db:
            assert db.execute(query, (edited[0], hit["session"])).fetchone()[0] > 0


def test_an_agent_finds_and_reads_history_through_the_mcp_server(todo_app):
    """The SDK's own client, over stdio, on the real session: search, then read the hit."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def session() -> tuple[str, str]:
        params = StdioServerParameters(
            command=str(BIN / "karni-historian"),
            args=["mcp"],
            cwd=str(todo_app.root),
            env=todo_app.env,
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            found = await client.call_tool("search_history", {"query": "Next.js", "limit": 3})
            assert not found.is_error, found.content[0].text
            first = found.content[0].text.splitlines()[0]
            read_back = await client.call_tool("get_history", {"ids": [first.split()[0]]})
            assert not read_back.is_error, read_back.content[0].text
            return found.content[0].text, read_back.content[0].text

    listing, text = asyncio.run(asyncio.wait_for(session(), 120))
    assert "**next**" in listing.lower() and re.search(r"\n\[\d+ tokens\]$", listing)
    assert "next.js" in text.lower() and re.search(r"\n\[\d+ tokens\]$", text)
