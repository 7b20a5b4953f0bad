"""Briefs bounded by their room, not by the store: what they read, import and print."""

import json
import subprocess
import sys

import pytest
from karni_historian.brief.briefs import MAX_REQUESTS_SHOWN, file_brief
from karni_historian.brief.shaped import shaping_requests
from karni_historian.cli import main
from karni_historian.cli.brief import BRIEF_REQUESTS
from karni_historian.model import Compartment, TextPart, ToolPart
from karni_historian.store import RunRecord, Store, parts_to_json
from karni_historian.store.briefing import BriefTables

SHAPED = "What shaped this file, newest first:"


@pytest.fixture
def root(tmp_path, monkeypatch):
    (tmp_path / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def work(root, session, requests, *, day="02", path="shop/cart.py", noise=0):
    """``requests`` prompts, each followed by an edit of ``path`` (and ``noise`` tool results).

    Request ``n`` replaces one line by ``n + 1`` lines, so its counts name it.
    """
    messages = []
    for n in range(requests):
        at = f"2026-03-{day}T10:{n // 60 % 60:02d}:{n % 60:02d}Z"
        prompt = [TextPart(f"<system-reminder>ignore</system-reminder> request {n}")]
        prompt.append(TextPart("injected", ignored=True))
        messages.append(("user", prompt, at))
        edit = {"file_path": str(root / path), "old_string": "x", "new_string": "y\n" * (n + 1)}
        messages.append(("assistant", [ToolPart("Edit", edit, output="ok")], at))
        messages += [
            ("user", [ToolPart("Read", {"file_path": "other.py"}, output="r")], at)
        ] * noise
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session(session, "generic", timestamp=messages[0][2])
            for ordinal, (role, parts, at) in enumerate(messages, 1):
                store.write_message(session, ordinal, role, parts_to_json(parts), timestamp=at)
                if role == "assistant":
                    store.add_file(session, ordinal, path, "edit")
            step = 2 + noise
            compartments = [
                Compartment(n * step + 1, n * step + step, f"Episode {n}", p1=f"Did {n}.")
                for n in range(requests)
            ]
        store.publish(session, compartments, [], RunRecord(session, "wrapup", "ok"))


def shaped_lines(text):
    lines = text.splitlines()
    start = lines.index(SHAPED) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i][:1].isdigit()), len(lines))
    return lines[start:end]


def test_the_newest_requests_are_the_head_of_all_of_them(root):
    work(root, "old-session", 30, day="01")
    work(root, "new-session", 25, day="02", noise=3)
    with Store.open(root, readonly=True) as store:
        every = shaping_requests(store, "shop/cart.py")
        assert len(every) == 55
        assert [s.request for s in every[:2]] == ["request 24", "request 23"]
        assert (every[0].added, every[0].removed) == (25, 1)
        for limit in (1, 8, 25, 26, 40, 100):
            newest = shaping_requests(store, "shop/cart.py", limit)
            assert [s.key() for s in newest] == [s.key() for s in every[:limit]]
        assert [s.key() for s in shaping_requests(store, "shop/", 10)] == [
            s.key() for s in every[:10]
        ]


def test_a_sized_brief_reads_a_few_requests_whatever_the_session_holds(root, monkeypatch):
    work(root, "s1", 400)
    calls = []
    original = BriefTables.tool_calls

    def counted(self, session_id, ordinal):
        calls.append(ordinal)
        return original(self, session_id, ordinal)

    monkeypatch.setattr(BriefTables, "tool_calls", counted)
    with BriefTables.open(root, readonly=True) as store:
        sized = file_brief(store, "shop/cart.py", room_chars=1100)
    assert len(calls) <= MAX_REQUESTS_SHOWN + 1
    shown = shaped_lines(sized)
    assert shown[0] == '1. 2026-03-02 10:06 +400 \u22121 \u2014 "request 399"'
    assert 1 <= len(shown) <= MAX_REQUESTS_SHOWN
    with Store.open(root, readonly=True) as store:
        full = file_brief(store, "shop/cart.py")
    assert shaped_lines(full)[: len(shown)] == shown


def test_the_brief_command_is_sized_to_the_budget_and_all_prints_everything(
    root, monkeypatch, capsys
):
    work(root, "s1", BRIEF_REQUESTS + 50)
    monkeypatch.chdir(root)
    assert main(["brief", "shop/cart.py"]) == 0
    sized = capsys.readouterr().out
    assert len(shaped_lines(sized)) == BRIEF_REQUESTS
    assert len(sized) <= 19_500 * 3.5 + 1  # the default history budget, in characters
    assert main(["brief", "--all", "shop/cart.py"]) == 0
    everything = capsys.readouterr().out
    assert len(shaped_lines(everything)) == BRIEF_REQUESTS + 50
    assert shaped_lines(everything)[:BRIEF_REQUESTS] == shaped_lines(sized)
    assert f"Episode {BRIEF_REQUESTS + 49}" in sized  # the newest episode is always shown
    assert "- Episode 0 (messages 1-2): Did 0." in everything  # every episode in full


def test_the_project_brief_command_is_bounded_too(root, monkeypatch, capsys):
    work(root, "s1", 250)
    monkeypatch.chdir(root)
    assert main(["brief"]) == 0
    sized = capsys.readouterr().out.splitlines()
    assert main(["brief", "--all"]) == 0
    everything = capsys.readouterr().out.splitlines()
    assert sized[0] == everything[0] == "Recent episodes, newest first:"
    assert sized[1] == "- Episode 249 (messages 499-500)"
    assert len(everything) == 251
    assert sized == everything[: len(sized)] and len(sized) < len(everything)


BRIEF_IMPORTS = """
import json, sys
import karni.agent.history
before = set(sys.modules)
from karni_historian.brief.provider import HistorianProvider
provider = HistorianProvider()
text = provider.context(sys.argv[1], "shop/cart.py", room=1100)
file_brief = sorted(set(sys.modules) - before)
titles = provider.project_context(sys.argv[1], room=1100)
print(json.dumps([text, titles, file_brief, sorted(set(sys.modules) - before)]))
"""

FILE_BRIEF_MODULES = {
    *(
        "karni_historian",
        "karni_historian.brief",
        "karni_historian.store",
        "karni_historian.edits",
        "karni_historian.prompts",
        "karni_historian.shared_folder",  # one listing: has the shared history changed?
    ),
    *(f"karni_historian.brief.{name}" for name in ("briefs", "decay", "fit", "lines")),
    *(f"karni_historian.brief.{name}" for name in ("notes", "paraphrase", "provider", "shaped")),
    *(f"karni_historian.store.{name}" for name in ("briefing", "database", "guard", "records")),
    # search_sql: the full-text index's migration, which the schema lists (no imports of its own)
    *(f"karni_historian.store.{name}" for name in ("schema", "search_sql", "sqlite_module")),
}
"""The historian's modules a file brief loads: no renderer, no error classes, no model."""

FILE_BRIEF_STANDARD_MODULES = {"_sqlite3", "_json"}
"""The standard modules it may load besides: not ``sqlite3``'s package (with ``datetime``),
``functools``, ``re``, ``difflib``, ``json``, ``dataclasses``, ``typing``, ``enum``."""

PROJECT_BRIEF_MODULES = {
    *(f"karni_historian.{name}" for name in ("errors", "xml_text")),
    *(f"karni_historian.brief.{name}" for name in ("budget", "handover", "render")),
}
"""What the project brief adds (its handover record, the block's sizes)."""


def test_the_brief_path_imports_only_what_it_needs(root):
    work(root, "s1", 40)
    probe = subprocess.run(
        [sys.executable, "-c", BRIEF_IMPORTS, str(root)], capture_output=True, text=True, check=True
    )
    text, titles, file_brief, both = json.loads(probe.stdout)
    assert shaped_lines(text)[0].endswith('"request 39"')
    assert " +40 \u22121 " in shaped_lines(text)[0]  # the edit's line counts were read
    assert titles.startswith("Recent episodes, newest first:")
    assert {m for m in file_brief if m.startswith("karni_historian")} <= FILE_BRIEF_MODULES
    standard = {m for m in file_brief if not m.startswith(("karni_historian", "karni."))}
    assert standard <= FILE_BRIEF_STANDARD_MODULES
    own = {m for m in both if m.startswith("karni_historian")}
    assert own <= FILE_BRIEF_MODULES | PROJECT_BRIEF_MODULES
    others = {m for m in both if not m.startswith(("karni_historian", "karni."))}
    assert others <= FILE_BRIEF_STANDARD_MODULES | {"zlib", "datetime", "_datetime", "math"}


def test_the_read_only_uri_is_the_resolved_path_percent_encoded(tmp_path):
    from pathlib import Path

    from karni_historian.store.database import readonly_uri

    folder = tmp_path / "a b#c?d%e ü"
    folder.mkdir()
    (tmp_path / "link").symlink_to(folder)
    path = str(tmp_path / "link" / "historian.db")
    assert readonly_uri(path) == Path(path).resolve().as_uri()
    assert "#" not in readonly_uri(path) and "?" not in readonly_uri(path)


def test_a_store_below_a_folder_name_that_needs_escaping_still_briefs(tmp_path, monkeypatch):
    from karni_historian.brief.provider import HistorianProvider

    project = tmp_path / "a b#c?d%e"
    project.mkdir()
    (project / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    work(project, "s1", 3)
    brief = HistorianProvider().context(str(project), "shop/cart.py", room=2000)
    assert brief is not None and '"request 2"' in brief


@pytest.mark.parametrize(
    ("request_text", "quoted"),
    [
        (  # a sentence that sets the scene, then the ask: the cut quote starts at the ask
            "Our billing API client keeps getting HTTP 429 from the billing API. Add a client-side"
            " rate limiter, a token bucket allowing 10 requests per second by default, in"
            " client/ratelimit.py.",
            '"\u2026Add a client-side rate limiter, a token bucket allowing 10 requests per second'
            ' by default\u2026"',
        ),
        (  # a correction opens with its point: cut as before
            "no, don't hide them in the default manager: the admin and the accountants' reports"
            " must see deleted events. Filter in the viewset instead.",
            "\"no, don't hide them in the default manager: the admin and the accountants' reports"
            ' must see\u2026"',
        ),
        (  # a question is the ask
            "The tests fail on CI. Why does test_checkout fail only there? It passes locally,"
            " and nothing in the diff touches it at all.",
            '"The tests fail on CI. Why does test_checkout fail only there?"',
        ),
        ("The cart is slow. Add a cache.", '"The cart is slow. Add a cache."'),  # fits whole
    ],
)
def test_a_cut_request_is_quoted_from_its_ask(request_text, quoted):
    """A request cut to fit keeps its point: the words that ask, not only the scene."""
    from karni_historian.brief.shaped import Shaping, shaping_line

    line = shaping_line(1, Shaping("s", 1, request_text, "2026-03-02T10:00:00Z", 3, 1))
    assert line == f"1. 2026-03-02 10:00 +3 \u22121 \u2014 {quoted}"
