"""How right ``karni-historian blame`` is: precision and coverage on labelled line ranges.

``scripts/eval`` runs this after the brief eval (``brief_eval.py``). Each case
is a real git repository in a temporary folder, worked on by recorded
sessions: the session bundled with the example (``examples/sessions/``,
replayed onto the files it read, its commits made again at its times), and
sessions generated here, whose edits and git commands run for real
(``packages/karni-historian/tests/git_sessions.py``): two sessions editing
one file, a squash merge, a rebase, a revert made by a session, a formatter
run over a session's lines, a person's edits among a session's lines. Every
case labels, by hand, line ranges of the final files with the session and
the request that wrote them, or with none (a person's lines).

After a plain ``karni-historian ingest``, ``blame FILE --json`` runs once per
labelled file. A labelled range is *attributed* when blame names a session
for any of its lines, and *right* when every line it names a session for
names the labelled session and request, and those are at least half its
lines. **Precision** is right / attributed (a wrong request is worse
than none), **coverage** right / ranges a session did write
(``docs/historian/blame.md``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
BIN = HERE / ".venv" / "bin"
sys.path.insert(0, str(HERE / "packages" / "karni-historian" / "tests"))

from blame_real import REAL_NAMES, real_cases, short  # noqa: E402
from git_sessions import Project  # noqa: E402

TARGETS = {"precision": 0.9, "coverage": 0.6}

TOTAL_ASK = "Add a total function to the cart that sums the item prices"
DISCOUNT_ASK = "Add a discount helper that takes a percentage off a price"
CART = '"""The cart."""\n\n\ndef empty():\n    return []\n'
TOTAL = (
    "\n\ndef total(items):\n"
    '    """The sum of the items\' prices, in cents."""\n'
    "    return sum(item.price for item in items)\n"
)
DISCOUNT = (
    "\n\ndef discounted(price, percent):\n"
    '    """The price less ``percent`` per cent, rounded to the cent."""\n'
    "    return round(price * (100 - percent) / 100, 2)\n"
)


@dataclass
class Label:
    """Lines ``first``..``last`` (by their text) of ``path`` and who wrote them (None: nobody)."""

    path: str
    first: str
    last: str
    session: str | None = None
    request: str | None = None
    lines: tuple[int, int] | None = None
    at: str | None = None
    """When the request was asked (the real cases name it so: its words may be pasted output)."""


@dataclass
class Case:
    name: str
    root: Path
    transcripts: Path
    labels: list[Label]
    installed: bool = False


@dataclass
class Score:
    name: str
    ranges: int = 0
    written: int = 0
    attributed: int = 0
    right: int = 0
    seconds: float = 0.0
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- generated cases


def _cart(project: Project) -> None:
    project.write("shop/cart.py", CART)
    project.commit("Add the cart")


def _total(project: Project, sid: str = "a0000000-0000-4000-8000-00000000000a"):
    a = project.session(sid)
    a.prompt(TOTAL_ASK)
    a.edit("shop/cart.py", "    return []\n", "    return []\n" + TOTAL)
    a.bash("git", "commit", "-am", "Add the cart total")
    return a


def _discount(project: Project, sid: str = "b0000000-0000-4000-8000-00000000000b", commit=True):
    b = project.session(sid)
    b.prompt(DISCOUNT_ASK)
    b.edit(
        "shop/cart.py",
        "    return sum(item.price for item in items)\n",
        "    return sum(item.price for item in items)\n" + DISCOUNT,
    )
    if commit:
        b.bash("git", "commit", "-am", "Add discounts")
    return b


def _cart_labels(a: str | None, b: str | None) -> list[Label]:
    return [
        Label("shop/cart.py", '"""The cart."""', "    return []"),
        Label("shop/cart.py", "def total(items):", "    return sum(item.price", a, TOTAL_ASK),
        Label("shop/cart.py", "def discounted(price", "    return round(", b, DISCOUNT_ASK),
    ]


def two_sessions(project: Project) -> list[Label]:
    """Two sessions add a function each to one file and commit; a person adds a third."""
    _cart(project)
    a, b = _total(project), _discount(project)
    text = (project.root / "shop/cart.py").read_text()
    project.write("shop/cart.py", text + "\n\ndef clear(cart):\n    cart.items.clear()\n")
    project.commit("Clear a cart")
    return [
        *_cart_labels(a.session_id, b.session_id),
        Label("shop/cart.py", "def clear(cart):", "    cart.items.clear()"),
    ]


def squash_merge(project: Project) -> list[Label]:
    """Two sessions commit on a branch that a person squash-merges, then deletes."""
    _cart(project)
    project.git("checkout", "-q", "-b", "feature")
    a, b = _total(project), _discount(project)
    project.git("checkout", "-q", "main")
    project.write("README.md", "The shop.\n")
    project.commit("Say what the shop is")
    project.tick()
    project.git("merge", "--squash", "feature")
    project.commit("Cart totals and discounts (#12)")
    project.git("branch", "-D", "feature")
    return _cart_labels(a.session_id, b.session_id)


def rebase(project: Project) -> list[Label]:
    """A session commits on a branch; a person changes the file on main and rebases the branch."""
    _cart(project)
    project.git("checkout", "-q", "-b", "feature")
    a = _total(project)
    project.git("checkout", "-q", "main")
    project.write("shop/cart.py", CART.replace("The cart.", "The shopping cart."))
    project.commit("Name the cart")
    project.git("checkout", "-q", "feature")
    project.tick()
    project.git("rebase", "-q", "main")
    return [
        Label("shop/cart.py", '"""The shopping cart."""', '"""The shopping cart."""'),
        Label("shop/cart.py", "def empty():", "    return []"),
        Label(
            "shop/cart.py",
            "def total(items):",
            "    return sum(item.price",
            a.session_id,
            TOTAL_ASK,
        ),
    ]


def revert(project: Project) -> list[Label]:
    """A session's commit is reverted by another session's ``git revert``."""
    _cart(project)
    a = _total(project)
    sample = "Make the cart start with a free sample item"
    c = project.session("c0000000-0000-4000-8000-00000000000c")
    c.prompt(sample)
    c.edit("shop/cart.py", "    return []\n", '    return ["free-sample-of-the-week"]\n')
    c.bash("git", "commit", "-am", "Start carts with a free sample")
    undo = "Revert the free sample commit, marketing cancelled it"
    b = project.session("b0000000-0000-4000-8000-00000000000b")
    b.prompt(undo)
    b.bash("git", "revert", "--no-edit", "HEAD")
    return [
        Label("shop/cart.py", '"""The cart."""', "def empty():"),
        Label("shop/cart.py", "    return []", "    return []", b.session_id, undo),
        Label(
            "shop/cart.py",
            "def total(items):",
            "    return sum(item.price",
            a.session_id,
            TOTAL_ASK,
        ),
    ]


def formatter(project: Project) -> list[Label]:
    """A session writes a table; a person's formatter changes its quotes and spaces, and commits."""
    ask = "Add a price table for the fruit we sell"
    a = project.session("a0000000-0000-4000-8000-00000000000a")
    a.prompt(ask)
    a.write(
        "shop/prices.py",
        "PRICES = {\n    'apple':  120,\n    'pear':   90,\n    'quince': 310,\n}\n\n\n"
        "def price_of(fruit):\n    return PRICES[fruit]\n",
    )
    project.write(
        "shop/prices.py",
        'PRICES = {\n    "apple": 120,\n    "pear": 90,\n    "quince": 310,\n}\n\n\n'
        "def price_of(fruit):\n    return PRICES[fruit]\n",
    )
    project.commit("Fruit prices")
    return [Label("shop/prices.py", "PRICES = {", "    return PRICES[fruit]", a.session_id, ask)]


def person_among(project: Project) -> list[Label]:
    """A person rewrites a line of a session's function, and copies one of its lines elsewhere."""
    _cart(project)
    a = _total(project)
    text = (project.root / "shop/cart.py").read_text()
    text = text.replace(
        '    """The sum of the items\' prices, in cents."""\n',
        '    """Prices are in cents; refunds count negative."""\n',
    )
    text += (
        "\n\ndef refund_total(items):\n    if items:\n"
        "        return sum(item.price for item in items)\n    return 0\n"
    )
    project.write("shop/cart.py", text)
    project.commit("Refund totals")
    return [
        Label("shop/cart.py", "def total(items):", "def total(items):", a.session_id, TOTAL_ASK),
        Label("shop/cart.py", '    """Prices are in cents', '    """Prices are in cents'),
        Label(
            "shop/cart.py",
            "    return sum(item.price",
            "    return sum(item.price",
            a.session_id,
            TOTAL_ASK,
        ),
        Label("shop/cart.py", "def refund_total(items):", "    return 0"),
    ]


def unseen_edits(project: Project) -> list[Label]:
    """What the historian cannot see: a ``sed -i`` edit, a formatter that wraps a long line."""
    _cart(project)
    project.write("shop/settings.py", "PAGE_SIZE = 20\n")
    project.commit("Settings")
    ask = "Show fifty items a page, and add a checkout function with its options"
    a = project.session("a0000000-0000-4000-8000-00000000000a")
    a.prompt(ask)
    a.bash("sed", "-i", "s/PAGE_SIZE = 20/PAGE_SIZE = 50/", "shop/settings.py")
    signature = (
        "def checkout(cart, *, currency='EUR', rounding=2, include_tax=True, gift_wrap=False):\n"
    )
    body = "    return cart.pay(currency=currency, rounding=rounding, tax=include_tax)\n"
    a.edit("shop/cart.py", "    return []\n", "    return []\n\n\n" + signature + body)
    wrapped = (
        'def checkout(\n    cart,\n    *,\n    currency="EUR",\n    rounding=2,\n'
        "    include_tax=True,\n    gift_wrap=False,\n):\n"
    )
    text = (project.root / "shop/cart.py").read_text().replace(signature, wrapped)
    project.write("shop/cart.py", text)
    project.commit("Checkout, fifty a page")
    return [
        Label("shop/settings.py", "PAGE_SIZE = 50", "PAGE_SIZE = 50", a.session_id, ask),
        Label("shop/cart.py", "def checkout(", "):", a.session_id, ask),
        Label("shop/cart.py", "    return cart.pay(", "    return cart.pay(", a.session_id, ask),
    ]


GENERATED = {
    "two-sessions": two_sessions,
    "squash-merge": squash_merge,
    "rebase": rebase,
    "revert": revert,
    "formatter": formatter,
    "person-among-session-lines": person_among,
    "unseen-edits": unseen_edits,
}


# ---------------------------------------------------------------- the bundled example

EXAMPLE = HERE / "examples" / "sessions" / "claude-code-soft-delete.jsonl"
SOFT_DELETE = "Make events soft-deletable instead of hard delete"
NOT_THERE = "no, don't hide them in the default manager"
CANCELLED = "show deleted events as cancelled on the event page"
EXAMPLE_LABELS = [
    Label("apps/events/models.py", '"""Events and the venues', "from django.db import models"),
    Label(
        "apps/events/models.py",
        "from karni.models import",
        "from karni.models import",
        "S",
        SOFT_DELETE,
    ),
    Label(
        "apps/events/models.py", "class Event(SoftDeleteModel):", "class Event(", "S", SOFT_DELETE
    ),
    Label("apps/events/models.py", "    title = ", "    capacity = "),
    Label("apps/events/viewsets.py", '"""The events API."""', "class EventViewSet("),
    Label(
        "apps/events/viewsets.py",
        "    # Deleted events stay",
        "    queryset = Event.objects.filter",
        "S",
        NOT_THERE,
    ),
    Label("apps/events/viewsets.py", "class VenueViewSet(", "    queryset = Venue.objects"),
    Label("apps/events/admin.py", "from django.contrib import admin", "class EventAdmin("),
    Label(
        "apps/events/admin.py",
        '    list_display = ("title"',
        "        queryset.update(",
        "S",
        NOT_THERE,
    ),
    Label("apps/events/admin.py", "@admin.register(Venue)", '    list_display = ("name"'),
    Label(
        "frontend/src/pages/events/EventDetail.tsx",
        "import type { Event }",
        "import type",
        "S",
        CANCELLED,
    ),
    Label(
        "frontend/src/pages/events/EventDetail.tsx",
        "export default function",
        "  );",
        "S",
        CANCELLED,
    ),
    Label("frontend/src/pages/EventList.tsx", "export default function", "  );", "S", CANCELLED),
]
"""Read from the session: who wrote which lines (S: the session; None: the files before it)."""

_NUMBERED = re.compile(r"^ *\d+\u2192", re.M)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def example(project: Project) -> list[Label]:
    """The example session replayed: its files as it read them, its edits, its two commits."""
    records = _records(EXAMPLE)
    calls: dict[str, dict] = {}
    results: dict[str, str] = {}
    for record in records:
        for part in _parts(record):
            if part.get("type") == "tool_use":
                calls[part["id"]] = part
            elif part.get("type") == "tool_result":
                content = part.get("content")
                results[part["tool_use_id"]] = content if isinstance(content, str) else ""
    for call in calls.values():  # the files as the session first read them, else the example's
        name = call["input"].get("file_path", "").replace("__PROJECT__/", "")
        if call["name"] == "Read" and not (project.root / name).exists():
            project.write(name, _NUMBERED.sub("", results.get(call["id"], "")) + "\n")
    for name in ("apps/events/viewsets.py", "apps/events/admin.py"):
        project.write(name, (HERE / "examples" / "eventsite" / name).read_text())
    project.now = _moment("2026-09-30T13:00:00Z")
    project.commit("The event site before soft delete")
    for record in records:
        for part in _parts(record):
            if part.get("type") == "tool_use":
                _replay(project, part, results.get(part["id"], ""), record["timestamp"])
    return [
        Label(x.path, x.first, x.last, x.session and EXAMPLE.stem, x.request)
        for x in EXAMPLE_LABELS
    ]


def _parts(record: dict) -> list[dict]:
    content = record.get("message", {}).get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _moment(stamp: str):
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _replay(project: Project, call: dict, output: str, stamp: str) -> None:
    """Do again what one tool call did: an edit, or a commit (with its subject, at its time)."""
    data = call["input"]
    if call["name"] == "Edit":
        target = project.root / data["file_path"].replace("__PROJECT__/", "")
        text = target.read_text()
        target.write_text(text.replace(data["old_string"], data["new_string"], 1))
    elif call["name"] == "Bash" and "git" in data["command"] and "commit" in data["command"]:
        found = re.search(r"^\[\S+ [0-9a-f]+\] (.+)$", output, re.M)
        if found:
            project.now = _moment(stamp)
            project.git("add", "-A")
            project.git("commit", "-q", "-m", found.group(1))


# ---------------------------------------------------------------- running and scoring


def _run(args: list[str], root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=600
    )


def _line_span(lines: list[str], label: Label) -> range:
    """The line numbers (1-based) a label names: its first line's text, to its last's after it."""
    if label.lines:
        return range(label.lines[0], label.lines[1] + 1)
    start = next(i for i, text in enumerate(lines) if text.startswith(label.first))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(label.last))
    return range(start + 1, end + 2)


def evaluate(name: str, build, work: Path) -> Score:
    """Build one case in ``work``, ingest its sessions, blame each labelled file, score it."""
    from session_fixtures import install, isolated_env

    env = {**isolated_env(str(work)), "COLUMNS": "100"}
    project = Project(work / "project")
    labels = build(project)
    transcripts = work / "transcripts"
    transcripts.mkdir()
    if build is example or hasattr(build, "install"):
        harness, session = getattr(build, "install", ("claude-code", EXAMPLE))
        install(harness, [session], str(project.root), env)
        ingest = _run([str(BIN / "karni-historian"), "-q", "ingest"], project.root, env)
    else:
        for recorder in project.recorders:
            recorder.save(transcripts)
        args = [str(BIN / "karni-historian"), "-q", "ingest", "--from", str(transcripts)]
        ingest = _run(args, project.root, env)
    if ingest.returncode != 0:
        raise SystemExit(f"eval: blame {name}: ingest failed: {ingest.stderr.strip()}")
    score = Score(name)
    for path in sorted({label.path for label in labels}):
        began = time.perf_counter()
        done = _run([str(BIN / "karni-historian"), "blame", path, "--json"], project.root, env)
        score.seconds = max(score.seconds, time.perf_counter() - began)
        if done.returncode != 0:
            raise SystemExit(f"eval: blame {name}: {path}: {done.stderr.strip()}")
        _score_file(score, path, json.loads(done.stdout), labels, project.root)
    return score


def _score_file(score: Score, path: str, data: dict, labels: list[Label], root: Path) -> None:
    by_line: dict[int, tuple[str | None, dict]] = {}
    for item in data["ranges"]:
        session = item["session"]["id"] if item["session"] else None
        request = item["request"] or {}
        for number in range(item["start_line"], item["end_line"] + 1):
            by_line[number] = (session, request)
    lines = (root / path).read_text().splitlines()
    for label in (x for x in labels if x.path == path):
        told = [by_line.get(n, (None, {})) for n in _line_span(lines, label)]
        score.ranges += 1
        score.written += label.session is not None
        if not any(session for session, _ in told):
            if label.session:
                score.missed.append(f"{path}:{label.lines or ''} {label.first!r}")
            continue
        score.attributed += 1
        named = [(session, request) for session, request in told if session]
        right = (
            label.session is not None
            and len(named) * 2 >= len(told)
            and all(
                session == label.session and _same(request, label) for session, request in named
            )
        )
        if right:
            score.right += 1
        else:
            said = sorted(
                {(s, r.get("ordinal"), short(r.get("text") or "")) for s, r in told}, key=str
            )
            score.wrong.append(f"{path}: {label.first!r} ({label.at or label.request}): {said}")


def _same(request: dict, label: Label) -> bool:
    """Whether blame's request is the labelled one: asked at its time, else in its words."""
    if label.at:
        return (request.get("timestamp") or "")[:19] == label.at[:19]
    return short(request.get("text") or "").startswith(short(label.request or "\0"))


def run_all(only: str | None = None) -> list[Score]:
    """Every case (whose name holds ``only``, when given), each in its own temporary folder."""
    cases = {"example": example, **GENERATED, **real_cases()}
    scores = []
    for name, build in cases.items():
        if only and only not in name and only not in "blame":
            continue
        with tempfile.TemporaryDirectory(prefix="karni-blame-eval-") as work:
            scores.append(evaluate(name, build, Path(work)))
    return scores


def totals(scores: list[Score]) -> dict[str, float]:
    attributed = sum(s.attributed for s in scores)
    written = sum(s.written for s in scores)
    right = sum(s.right for s in scores)
    return {
        "precision": right / attributed if attributed else 0.0,
        "coverage": right / written if written else 0.0,
        "ranges": sum(s.ranges for s in scores),
        "slowest_seconds": max((s.seconds for s in scores), default=0.0),
    }


def _row(s: Score) -> str:
    precision = s.right / s.attributed if s.attributed else 1.0
    coverage = s.right / s.written if s.written else 1.0
    cells = (s.ranges, s.written, s.attributed, s.right, f"{precision:.2f}", f"{coverage:.2f}")
    return f"{s.name:<44} " + " ".join(f"{c:>7}" for c in cells) + f" {s.seconds:>6.2f}s"


def _sum(name: str, scores: list[Score]) -> Score:
    fields = ("ranges", "written", "attributed", "right")
    total = Score(name, **{f: sum(getattr(s, f) for s in scores) for f in fields})
    total.seconds = max((s.seconds for s in scores), default=0.0)
    return total


def report(scores: list[Score], verbose: bool) -> tuple[dict, list[str]]:
    """Print the blame figures, per case and for the bundled and real cases; return them and the
    targets missed."""
    print()
    header = ("ranges", "written", "named", "right", "prec.", "cover.", "slowest")
    print(f"{'blame case':<44} " + " ".join(f"{c:>7}" for c in header))
    for s in scores:
        print(_row(s))
        for kind, lines in (("wrong", s.wrong), ("missed", s.missed)) if verbose else ():
            for line in lines:
                print(f"     {kind}: {line}")
    real = [s for s in scores if s.name in REAL_NAMES]
    for name, part in (
        ("(the bundled cases)", [s for s in scores if s not in real]),
        ("(the real sessions)", real),
    ):
        if part and len(part) < len(scores):
            print(_row(_sum(name, part)))
    figures: dict = totals(scores)
    figures["cases"] = {
        s.name: {
            "ranges": s.ranges,
            "written": s.written,
            "attributed": s.attributed,
            "right": s.right,
        }
        for s in scores
    }
    print(
        f"blame: precision {figures['precision']:.2f} (target >= {TARGETS['precision']}),"
        f" coverage {figures['coverage']:.2f} (target >= {TARGETS['coverage']}),"
        f" slowest blame {figures['slowest_seconds']:.2f} s"
    )
    missed = [
        f"blame {key} {figures[key]:.2f} < {target}"
        for key, target in TARGETS.items()
        if scores and figures[key] < target
    ]
    return figures, missed


if __name__ == "__main__":
    import argparse

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    parser = argparse.ArgumentParser(
        prog="scripts/blame_eval.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="exit 1 below a target")
    parser.add_argument("-k", dest="only", help="only cases whose name holds this")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each wrong range")
    args = parser.parse_args()
    _figures, missed_targets = report(run_all(args.only), args.verbose)
    for line in missed_targets:
        print(f"target missed: {line}")
    sys.exit(1 if args.check and missed_targets else 0)
