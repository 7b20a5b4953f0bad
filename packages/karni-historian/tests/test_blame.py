"""``karni-historian blame``: each range's commit, and the request and session that wrote it.

Every test builds a real git repository, lets recorded Claude Code sessions
edit and commit in it (``git_sessions.py``), ingests their transcripts and
runs the real command. See ``docs/historian/blame.md``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from git_sessions import Project

CART = '"""The cart."""\n\n\ndef empty():\n    return []\n'
TOTAL_ASK = "Add a total function to the cart that sums the item prices"
DISCOUNT_ASK = "Add a discount helper that takes a percentage off a price"
TOTAL = (
    "\n\ndef total(items):\n"
    '    """The sum of the items\' prices."""\n'
    "    return sum(item.price for item in items)\n"
)
DISCOUNT = (
    "\n\ndef discounted(price, percent):\n"
    '    """The price less ``percent`` per cent, in cents."""\n'
    "    return round(price * (100 - percent) / 100, 2)\n"
)
SCHEMA = Path(__file__).parent / "fixtures" / "agent-trace"


@pytest.fixture
def project(tmp_path, user_folders, monkeypatch):
    made = Project(tmp_path / "shop")
    made.write("shop/cart.py", CART)
    made.commit("Add the cart")
    monkeypatch.chdir(made.root)
    return made


def ingest(historian, project, *sessions):
    folder = project.root.parent / "transcripts"
    folder.mkdir(exist_ok=True)
    for session in sessions:
        session.save(folder)
    code, _out, err = historian("-q", "ingest", "--from", str(folder))
    assert code == 0, err


def two_sessions(project, *, commit_second=True):
    """Session A adds ``total`` and commits; session B adds ``discounted`` (and commits)."""
    a = project.session("a0000000-0000-4000-8000-00000000000a")
    a.prompt(TOTAL_ASK)
    a.edit("shop/cart.py", "    return []\n", "    return []\n" + TOTAL)
    a.bash("git", "commit", "-am", "Add the cart total")
    b = project.session("b0000000-0000-4000-8000-00000000000b")
    b.prompt(DISCOUNT_ASK)
    b.edit(
        "shop/cart.py",
        "    return sum(item.price for item in items)\n",
        "    return sum(item.price for item in items)\n" + DISCOUNT,
    )
    if commit_second:
        b.bash("git", "commit", "-am", "Add discounts")
    return a, b


def who_wrote(historian, path, *extra):
    """``{line text: (request words or None, evidence)}`` from ``blame --json``."""
    code, out, err = historian("blame", path, "--json", *extra)
    assert code == 0, err
    data = json.loads(out)
    lines = (Path.cwd() / path).read_text().splitlines()
    found = {}
    for item in data["ranges"]:
        request = item["request"]["text"] if item["request"] else None
        for number in range(item["start_line"], item["end_line"] + 1):
            found[lines[number - 1]] = (request, item["evidence"])
    return found, data


def test_two_sessions_each_range_gets_its_own_request(historian, project):
    a, b = two_sessions(project)
    ingest(historian, project, a, b)
    found, data = who_wrote(historian, "shop/cart.py")
    assert found["def total(items):"] == (TOTAL_ASK, "commit")
    assert found["    return sum(item.price for item in items)"] == (TOTAL_ASK, "commit")
    assert found["def discounted(price, percent):"] == (DISCOUNT_ASK, "commit")
    assert found["    return round(price * (100 - percent) / 100, 2)"] == (DISCOUNT_ASK, "commit")
    # What a person wrote and committed before any session: no session is named.
    assert found['"""The cart."""'] == (None, None)
    assert found["def empty():"] == (None, None)
    assert sorted(data["sessions"]) == [a.session_id, b.session_id]

    code, text, _err = historian("blame", "shop/cart.py")
    assert code == 0
    rows = text.splitlines()
    assert "no known session" in rows[0] and rows[0].strip().startswith("1-5")
    assert any(TOTAL_ASK in row and "session a0000000" in row for row in rows)
    assert any(DISCOUNT_ASK in row and "session b0000000" in row for row in rows)


def test_the_text_and_json_forms_agree(historian, project):
    a, b = two_sessions(project, commit_second=False)
    ingest(historian, project, a, b)
    found, data = who_wrote(historian, "shop/cart.py")
    # B's lines are not committed: known by the text B's edit wrote.
    assert found["def discounted(price, percent):"] == (DISCOUNT_ASK, "content")
    code, text, _err = historian("blame", "shop/cart.py")
    assert code == 0
    rows = text.splitlines()
    assert len(rows) == len(data["ranges"])
    for row, item in zip(rows, data["ranges"], strict=True):
        start, end = item["start_line"], item["end_line"]
        assert row.split()[0] == (f"{start}" if start == end else f"{start}-{end}")
        if item["request"]:
            assert item["request"]["text"] in row and item["evidence"] in row
        else:
            assert row.endswith("no known session")


def test_after_a_squash_merge_the_written_text_still_names_each_request(historian, project):
    project.git("checkout", "-q", "-b", "feature")
    a, b = two_sessions(project)
    project.git("checkout", "-q", "main")
    project.tick()
    project.git("merge", "--squash", "feature")
    squash = project.commit("Cart totals and discounts (#12)")
    project.git("branch", "-D", "feature")
    ingest(historian, project, a, b)
    found, data = who_wrote(historian, "shop/cart.py")
    assert found["def total(items):"] == (TOTAL_ASK, "content")
    assert found["def discounted(price, percent):"] == (DISCOUNT_ASK, "content")
    assert found["def empty():"] == (None, None)
    squashed = [r for r in data["ranges"] if r["commit"]["sha"] == squash]
    assert {r["request"]["text"] for r in squashed if r["request"]} == {TOTAL_ASK, DISCOUNT_ASK}
    code, text, _err = historian("blame", "shop/cart.py")
    assert code == 0
    rows = [row for row in text.splitlines() if squash[:8] in row]
    assert any(TOTAL_ASK in row and "(content)" in row for row in rows)
    assert any(DISCOUNT_ASK in row and "(content)" in row for row in rows)


def test_a_session_known_only_by_its_rows_is_blamed_the_same(historian, project):
    # A teammate's shared session reaches the store as rows (its requests, the hashes of
    # what it wrote, its commits), never as messages: blame reads only those rows.
    from karni_historian.store import Store
    from karni_historian.written_ranges import encode_hashes, written_ranges

    with Store.open(project.root, create=True) as store, store.transaction():
        store.ensure_session("shared-1", "shared")
        (wrote,) = written_ranges("    return []\n", "    return []\n" + TOTAL)
        store.connection.execute(
            "INSERT INTO file_requests (path, session_id, request, timestamp, text, added,"
            " removed) VALUES ('shop/cart.py', 'shared-1', 3, '2026-10-01T09:00:40Z', ?, 5, 0)",
            (TOTAL_ASK,),
        )
        store.connection.execute(
            "INSERT INTO written_ranges (path, session_id, request, ordinal, position, timestamp,"
            " hash, lines, loose) VALUES ('shop/cart.py', 'shared-1', 3, 4, 0,"
            " '2026-10-01T09:00:50Z', ?, ?, ?)",
            (wrote.hash, encode_hashes(wrote.line_hashes), encode_hashes(wrote.loose_hashes)),
        )
    (project.root / "shop/cart.py").write_text(CART + TOTAL)
    project.commit("Totals, from a teammate's branch")
    found, data = who_wrote(historian, "shop/cart.py")
    assert found["def total(items):"] == (TOTAL_ASK, "content")
    assert found["def empty():"] == (None, None)
    assert data["sessions"] == ["shared-1"]
    assert data["pending_sessions"] == 0  # nothing to read again: it has no messages


def test_a_rebased_commit_is_known_as_the_sessions_own(historian, project, tmp_path):
    project.git("checkout", "-q", "-b", "feature")
    a = project.session("a0000000-0000-4000-8000-00000000000a")
    a.prompt(TOTAL_ASK)
    a.edit("shop/cart.py", "    return []\n", "    return []\n" + TOTAL)
    a.bash("git", "commit", "-am", "Add the cart total")
    project.git("checkout", "-q", "main")
    project.write("README.md", "The shop.\n")
    project.commit("Say what the shop is")
    project.git("checkout", "-q", "feature")
    project.tick()
    project.git("rebase", "-q", "main")
    ingest(historian, project, a)
    found, _data = who_wrote(historian, "shop/cart.py")
    assert found["def total(items):"] == (TOTAL_ASK, "rebased-commit")

    # A clone has only the rebased commit: the same subject at the session's time still tells.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(project.root), str(clone)], check=True)
    (clone / ".karni").mkdir()
    shutil.copytree(project.root / ".karni" / "local", clone / ".karni" / "local")
    code, out, err = historian(
        "--project", str(clone), "blame", str(clone / "shop/cart.py"), "--json"
    )
    assert code == 0, err
    ranges = json.loads(out)["ranges"]
    total = next(r for r in ranges if r["request"])
    assert (total["request"]["text"], total["evidence"]) == (TOTAL_ASK, "rebased-commit")


def test_a_revert_made_by_a_session_names_the_request_that_reverted(historian, project):
    a = project.session("a0000000-0000-4000-8000-00000000000a")
    a.prompt("Make the cart start with a free sample item")
    a.edit("shop/cart.py", "    return []\n", '    return ["free-sample-of-the-week"]\n')
    a.bash("git", "commit", "-am", "Start carts with a free sample")
    b = project.session("b0000000-0000-4000-8000-00000000000b")
    b.prompt("Revert the free sample commit, marketing cancelled it")
    output = b.bash("git", "revert", "--no-edit", "HEAD")
    assert output.startswith("[main ")
    ingest(historian, project, a, b)
    found, _data = who_wrote(historian, "shop/cart.py")
    assert found["    return []"] == (
        "Revert the free sample commit, marketing cancelled it",
        "commit",
    )
    assert not any(
        request == "Make the cart start with a free sample item" for request, _ in found.values()
    )


def test_a_corrected_approach_says_it_was_superseded(historian, project):
    a = project.session("a0000000-0000-4000-8000-00000000000a")
    a.prompt(TOTAL_ASK)
    a.edit(
        "shop/cart.py",
        "    return []\n",
        "    return []\n\n\ndef total(items):\n    cache = {}\n"
        "    return sum(item.price for item in items)\n",
    )
    a.prompt("no, don't cache the total in total: prices change while the cart is open")
    a.edit("shop/cart.py", "    cache = {}\n", "")
    a.bash("git", "commit", "-am", "Add the cart total")
    ingest(historian, project, a)
    code, out, err = historian("blame", "shop/cart.py", "--json")
    assert code == 0, err
    ranges = json.loads(out)["ranges"]
    total = next(r for r in ranges if r["request"] and r["request"]["text"] == TOTAL_ASK)
    assert [later["kind"] for later in total["later"]] == ["superseded"]
    assert "don't cache" in total["later"][0]["note"]
    code, text, _err = historian("blame", "shop/cart.py")
    assert "later superseded:" in text


def test_lines_a_rewrite_kept_name_nobody_once_the_user_undid_it(historian, project):
    """The user undid a rewrite and put the file back: what the rewrite had kept is not its work.

    A rewrite writes again most lines it keeps, so after the undo those lines
    match its text; the undo note (``undone: …``) takes its writes out of the
    evidence. The request after the undo is still named for what it wrote.
    """
    project.write("shop/cart.py", CART + "\n\ndef currency_of(cart_items):\n    return 'EUR'\n")
    project.commit("Add the cart's currency")
    a = project.session("a0000000-0000-4000-8000-00000000000a")
    a.prompt("Rewrite the cart module as a class")
    a.write(
        "shop/cart.py",
        '"""The cart."""\n\n\nclass Cart:\n    items = []\n\n\n'
        "def currency_of(cart_items):\n    return 'EUR'\n\n\ndef empty():\n    return []\n",
    )
    a.bash("git", "commit", "-am", "Rewrite the cart as a class")
    project.write("shop/cart.py", CART + "\n\ndef currency_of(cart_items):\n    return 'EUR'\n")
    project.commit("Put the cart back as functions")
    a.prompt("I undid your rewrite of cart.py, it broke checkout. Add the total instead")
    a.edit("shop/cart.py", "    return 'EUR'\n", "    return 'EUR'\n" + TOTAL)
    a.bash("git", "commit", "-am", "Add the cart total")
    ingest(historian, project, a)
    found, _data = who_wrote(historian, "shop/cart.py")
    assert found["def currency_of(cart_items):"] == (None, None)
    assert found["def empty():"] == (None, None)
    asked = "I undid your rewrite of cart.py, it broke checkout. Add the total instead"
    assert found["def total(items):"] == (asked, "commit")


def test_agent_trace_records_validate_against_the_specifications_schema(historian, project):
    schema = json.loads((SCHEMA / "trace-record.schema.json").read_text())
    checker = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    for example in ("example-record.json", "minimal-record.json"):
        checker.validate(json.loads((SCHEMA / example).read_text()))
    a, b = two_sessions(project, commit_second=False)
    ingest(historian, project, a, b)
    code, out, err = historian("blame", "shop/cart.py", "--format", "agent-trace")
    assert code == 0, err
    record = json.loads(out)
    checker.validate(record)
    head = project.git("rev-parse", "HEAD").strip()
    assert record["vcs"] == {"type": "git", "revision": head}
    (entry,) = record["files"]
    assert entry["path"] == "shop/cart.py"
    assert len(entry["conversations"]) == 2
    ours = record["metadata"]["dev.karni"]["ranges"]
    assert {r["request"]["text"] for r in ours} == {TOTAL_ASK, DISCOUNT_ASK}
    assert {r["session"]["id"] for r in ours} == {a.session_id, b.session_id}
    traced = [r for c in entry["conversations"] for r in c["ranges"]]
    assert [(r["start_line"], r["end_line"], r["content_hash"]) for r in traced] == [
        (r["start_line"], r["end_line"], r["content_hash"]) for r in ours
    ]


def test_a_line_range_blames_only_those_lines(historian, project):
    a, b = two_sessions(project)
    ingest(historian, project, a, b)
    code, out, err = historian("blame", "shop/cart.py", "-L", "1,5", "--json")
    assert code == 0, err
    (only,) = json.loads(out)["ranges"]
    assert (only["start_line"], only["end_line"], only["session"]) == (1, 5, None)


@pytest.mark.parametrize(
    ("args", "expected", "exit_code"),
    [
        (("blame", "../elsewhere.py"), "lies outside the project", 2),
        (("blame", "shop/new.py"), "shop/new.py is not tracked by git; commit it first", 1),
        (("blame", "shop/cart.py", "-L", "9,2"), "START comes after END", 2),
        (("blame", "shop/cart.py", "-L", "x"), "-L takes START,END", 2),
        (("blame", "shop/cart.py", "-L", "7,9"), "-L goes beyond the end of shop/cart.py", 1),
    ],
)
def test_blame_refuses_in_one_line(historian, project, args, expected, exit_code):
    ingest(historian, project)
    project.write("shop/new.py", "x = 1\n")
    code, out, err = historian(*args)
    assert (code, out) == (exit_code, "")
    assert expected in err and len(err.strip().splitlines()) == 1


def test_blame_outside_a_repository_says_so(historian, tmp_path, user_folders, monkeypatch):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "manage.py").write_text("")
    (root / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(root)
    (root / "none").mkdir()
    assert historian("-q", "ingest", "--from", str(root / "none"))[0] == 0
    code, out, err = historian("blame", "a.py")
    assert (code, out) == (1, "")
    assert "is not in a git repository" in err and len(err.strip().splitlines()) == 1


def test_sessions_read_before_blame_existed_are_counted_until_the_next_ingest(historian, project):
    import sqlite3

    a, b = two_sessions(project)
    ingest(historian, project, a, b)
    database = sqlite3.connect(project.root / ".karni" / "local" / "historian.db")
    with database:
        database.execute("UPDATE noted_sessions SET version = 1")
    database.close()
    code, out, err = historian("blame", "shop/cart.py", "--json")
    assert code == 0 and json.loads(out)["pending_sessions"] == 2
    assert "2 stored session(s) not yet read for blame; run `karni-historian ingest`" in err
    code, _out, err = historian("-q", "ingest", "--from", str(project.root.parent / "transcripts"))
    assert code == 0, err
    code, out, err = historian("blame", "shop/cart.py", "--json")
    assert (json.loads(out)["pending_sessions"], err) == (0, "")


def test_the_users_git_configuration_and_variables_change_nothing(
    historian, project, user_folders, monkeypatch
):
    a, b = two_sessions(project)
    ingest(historian, project, a, b)
    expected, _data = who_wrote(historian, "shop/cart.py")
    commit_a = project.git("log", "--format=%H", "-1", "HEAD~1").strip()
    ignored = user_folders / "ignored-revisions"
    ignored.write_text(commit_a + "\n")
    home = user_folders / "home"
    home.mkdir(exist_ok=True)
    (home / ".gitconfig").write_text(
        f"[blame]\n\tignoreRevsFile = {ignored}\n\tdate = relative\n[core]\n\tpager = false\n"
    )
    monkeypatch.setenv("GIT_DIR", str(user_folders / "elsewhere.git"))
    monkeypatch.setenv("GIT_PAGER", "false")
    found, _data = who_wrote(historian, "shop/cart.py")
    assert found == expected
    assert found["def total(items):"] == (TOTAL_ASK, "commit")
