import os
import subprocess
import sys

import pytest
from karni.agent.history import compose
from karni.agent.history.cap import body_room
from karni.agent.history.markers import markers_rule_out
from karni_historian.brief.briefs import file_brief
from karni_historian.brief.provider import HistorianProvider
from karni_historian.model import Compartment, Fact, TextPart
from karni_historian.store import RunRecord, Store, parts_to_json


@pytest.fixture
def root(tmp_path):
    (tmp_path / "manage.py").write_text("")
    return tmp_path


def fill(root, episodes, *, session="s1", facts=(), started="2026-03-02T10:00:00Z"):
    """Store one message per ordinal and publish ``episodes`` of (compartment, files)."""
    with Store.open(root, create=True) as store:
        last = max(c.end for c, _ in episodes)
        with store.transaction():
            store.ensure_session(session, "generic")
            for ordinal in range(1, last + 1):
                store.write_message(
                    session,
                    ordinal,
                    "user",
                    parts_to_json([TextPart(f"m{ordinal}")]),
                    timestamp=started,
                )
            for compartment, files in episodes:
                for path in files:
                    store.add_file(session, compartment.start, path, "edit")
        for i, (compartment, _) in enumerate(episodes):
            store.publish(
                session,
                [compartment],
                list(facts) if i == 0 else [],
                RunRecord(session, "wrapup", "ok"),
            )


def episode(start, end, title, importance=50, date="2026-03-02"):
    return Compartment(
        start,
        end,
        title,
        p1=f"{title}: the full story of what we did and why, with the details that matter.",
        p2=f"{title}: what we did and why.",
        p3=f"{title}, briefly.",
        p4="",
        importance=importance,
        start_date=date,
        end_date=date,
    )


def test_detect_is_a_file_check(root):
    provider = HistorianProvider()
    assert provider.name == "historian"
    assert provider.detect(root) is False
    (root / ".karni" / "local").mkdir(parents=True)
    assert markers_rule_out(provider, root)  # Karni's speed hint skips detect here
    (root / ".karni" / "local" / "historian.db").write_bytes(b"")
    assert provider.detect(root) is True
    assert not markers_rule_out(provider, root)


def test_import_and_detect_stay_cheap(root):
    code = (
        "import sys; from pathlib import Path;"
        "from karni_historian.brief.provider import HistorianProvider;"
        f"HistorianProvider().detect(Path({str(root)!r}));"
        "print(sorted(m for m in ('sqlite3', 'json', 'karni_historian.store', 'dataclasses')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_file_brief_facts_first_then_episodes(root, snapshot_text):
    fill(
        root,
        [
            (episode(1, 6, "Rename total() to subtotal()"), ["shop/cart.py"]),
            (episode(7, 12, "Add discount() helper", importance=80), ["shop/pricing.py"]),
            (episode(13, 20, "Revert discount use in cart.py", importance=70), ["shop/cart.py"]),
        ],
        facts=[Fact("CONSTRAINTS", "Never apply discounts to gift cards.")],
    )
    provider = HistorianProvider()
    brief = provider.context(root, "shop/cart.py")
    assert brief == snapshot_text
    assert brief.splitlines()[:2] == [
        "Project memory:",
        "- Never apply discounts to gift cards. (constraints)",
    ]
    assert "Add discount() helper" not in brief
    assert provider.context(root, "shop/other.py") is None
    assert provider.context(root, "shop") is not None  # a folder covers its files


def test_tight_room_decays_old_episodes_instead_of_cutting(root):
    episodes = [
        (
            episode(i * 2 + 1, i * 2 + 2, f"Episode {i:02d}", importance=90 if i == 3 else 50),
            ["a.py"],
        )
        for i in range(40)
    ]
    fill(root, episodes)
    provider = HistorianProvider()
    heading = "HISTORY: a.py (historian)"
    room = body_room(heading, 1)  # what Karni passes a lone provider
    brief = provider.context(root, "a.py", room=room)
    assert len(brief) <= room
    assert brief != provider.context(root, "a.py", room=room // 2)
    lines = brief.splitlines()
    # What shaped the file comes first, newest request first, a few of them.
    assert lines[:2] == [
        "What shaped this file, newest first:",
        '1. 2026-03-02 10:00 +0 \u22120 \u2014 "m79"',
    ]
    episodes = lines.index("Episodes that touched this file, oldest first:")
    assert 2 < episodes <= 9
    # The newest episode keeps its paraphrase; the oldest shown ones are anchors.
    assert lines[-1].startswith("- 2026-03-02 Episode 39 (messages 79-80): Episode 39")
    # The important old episode survives as an anchor; plain ones of its age are archived.
    assert lines[episodes + 1] == "- 2026-03-02 Episode 03 (messages 7-8)"
    assert "Episode 02" not in brief and "Episode 04" not in brief
    composed = compose(root, "a.py", providers=[provider])
    assert "truncated" not in composed
    assert composed == f"{heading}\n{brief}"


def test_the_newest_episode_shrinks_to_fit_instead_of_vanishing(root):
    fill(root, [(episode(1, 2, "Long"), ["a.py"])])
    provider = HistorianProvider()
    full = provider.context(root, "a.py", room=10_000)
    assert full.endswith(
        "Long: the full story of what we did and why, with the details that matter."
    )
    brief = provider.context(root, "a.py", room=200)
    assert len(brief) <= 200
    assert brief.splitlines()[-2:] == [
        "Episodes that touched this file, oldest first:",
        "- 2026-03-02 Long (messages 1-2): Long: what we did and why.",
    ]


def test_project_context_and_full_command(root):
    fill(
        root,
        [(episode(1, 2, "First"), ["a.py"]), (episode(3, 4, "Second"), ["b.py"])],
        facts=[Fact("ARCHITECTURE", "Pricing lives apart from the cart.")],
    )
    provider = HistorianProvider()
    assert provider.project_context(root) == (
        "Project memory:\n"
        "- Pricing lives apart from the cart. (architecture)\n"
        "Recent episodes, newest first:\n"
        "- 2026-03-02 Second (messages 3-4)\n"
        "- 2026-03-02 First (messages 1-2)"
    )
    assert provider.full_command(root, "a b/c.py") == "karni-historian brief 'a b/c.py'"
    assert provider.full_command(root, "shop/cart.py") == "karni-historian brief shop/cart.py"
    assert provider.full_command(root, None) == "karni-historian brief"


def test_full_brief_is_uncapped(root):
    fill(root, [(episode(i * 2 + 1, i * 2 + 2, f"E{i}"), ["a.py"]) for i in range(40)])
    with Store.open(root, readonly=True) as store:
        full = file_brief(store, "a.py")
    lines = full.splitlines()
    assert len(lines) == 82  # 40 requests and 40 episodes, each under its heading
    assert lines[1] == '1. 2026-03-02 10:00 +0 \u22120 \u2014 "m79"'
    assert lines[40] == '40. 2026-03-02 10:00 +0 \u22120 \u2014 "m1"'
    assert lines[42] == (
        "- 2026-03-02 E0 (messages 1-2): E0: the full story of what we did and why, "
        "with the details that matter."
    )


def test_never_raises(root):
    folder = root / ".karni" / "local"
    folder.mkdir(parents=True)
    (folder / "historian.db").write_bytes(b"this is not a database" * 100)
    provider = HistorianProvider()
    assert provider.detect(root) is True
    assert provider.context(root, "a.py") is None
    assert provider.project_context(root) is None
    assert provider.context(root, None) is None
    assert provider.context(os.devnull, "a.py") is None


class _LongBrief:
    """A provider without ``accepts_room`` whose brief is far over any share."""

    def __init__(self, name):
        self.name = name

    def detect(self, project_root):
        return True

    def context(self, project_root, path):
        return "\n".join(f"{self.name} {i} " + "x" * 60 for i in range(40))


def test_next_to_two_providers_the_brief_fits_its_room_with_episodes(root):
    fill(root, [(episode(i * 2 + 1, i * 2 + 2, f"Episode {i:02d}"), ["a.py"]) for i in range(40)])
    providers = [HistorianProvider(), _LongBrief("adr"), _LongBrief("zz")]
    composed = compose(root, "a.py", providers=providers)
    lines = composed.split("\n")
    start = lines.index("HISTORY: a.py (historian)")
    end = lines.index("HISTORY: a.py (zz)")
    own = lines[start + 1 : end]
    assert own[0] == "What shaped this file, newest first:"  # the layout of docs/historian
    assert "Episodes that touched this file, oldest first:" in own
    assert own[-1].startswith("- 2026-03-02 Episode 39 (messages 79-80)")  # the newest, whole
    assert not any("truncated" in line for line in own)  # sized to its room, never cut
    assert len(composed) <= 1200


def _many(root, count, session, started, touching_every=1):
    """``count`` compartments of three messages each; every ``touching_every``-th touches a.py."""
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session(session, "generic")
            parts = parts_to_json([TextPart("m")])
            store.insert_messages(
                session, [(n, "user", parts, started, "") for n in range(1, count * 3 + 1)]
            )
            for i in range(0, count, touching_every):
                store.add_file(session, i * 3 + 1, "src/a.py", "edit")
        compartments = [
            episode(i * 3 + 1, i * 3 + 3, f"{session} {i}", importance=(i * 37) % 100 + 1)
            for i in range(count)
        ]
        store.publish(session, compartments, [], RunRecord(session, "wrapup", "ok"))


def test_the_newest_touching_compartments_are_the_tail_of_the_full_list(root):
    _many(root, 40, "old", "2026-03-01T10:00:00Z", touching_every=3)
    _many(root, 30, "new", "2026-03-02T10:00:00Z", touching_every=2)
    with Store.open(root, readonly=True) as store:
        every = store.touching_compartments("src/a.py")
        assert len(every) == 14 + 15
        for newest in (1, 15, 20, 29, 100):
            assert store.touching_compartments("src/a.py", newest) == every[-newest:]
        assert store.touching_compartments("src/", 20) == every[-20:]
        assert store.touching_compartments("src/b.py", 5) == []


def test_the_newest_over_many_small_sessions_are_the_tail_of_the_full_list(root):
    # A team's shared history: many sessions of a few compartments, walked a batch at a time.
    for n in range(75):
        _many(root, 1 + n % 4, f"s{n:03d}", f"2026-03-01T{n // 60:02d}:{n % 60:02d}:00Z", 1 + n % 2)
    with Store.open(root, readonly=True) as store:
        every = store.touching_compartments("src/a.py")
        assert len({row[0] for row in every}) == 75
        for newest in (1, 2, 7, 40, 63, 64, 100, len(every), len(every) + 5):
            assert store.touching_compartments("src/a.py", newest) == every[-newest:]


def test_a_sized_brief_reads_only_what_its_room_can_show_and_is_unchanged(root, monkeypatch):
    from karni_historian.brief.decay import newest_visible

    _many(root, newest_visible() + 500, "s1", "2026-03-02T10:00:00Z")
    with Store.open(root, readonly=True) as store:
        asked = []
        full = Store.touching_compartments

        def spy(self, path, newest=None):
            asked.append(newest)
            return full(self, path, newest)

        monkeypatch.setattr(Store, "touching_compartments", spy)
        bounded = file_brief(store, "src/a.py", room_chars=1100)
        monkeypatch.setattr(
            Store, "touching_compartments", lambda self, path, newest=None: full(self, path)
        )
        unbounded_selection = file_brief(store, "src/a.py", room_chars=1100)
    # A room of 1,100 characters shows a few dozen episodes at most: far fewer are read
    # than the decay curve's limit, and the brief is the one every episode gives.
    assert asked and all(newest < newest_visible() // 4 for newest in asked)
    assert bounded is not None and "Episodes that touched this file" in bounded
    assert bounded == unbounded_selection
