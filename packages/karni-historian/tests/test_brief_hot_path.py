"""The file brief's cheap replacements give what the costly originals gave.

Before every edit the brief avoids ``sqlite3``'s package, ``functools``,
``re``, ``difflib`` and ``datetime`` (``docs/performance.md``); each test here
pins a replacement to the behaviour of what it replaced.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest
from karni_historian.brief import fit
from karni_historian.brief.decay import PRESSURE_FLOOR
from karni_historian.brief.shaped import _minute, _minute_by_datetime
from karni_historian.edits import diff_counts
from karni_historian.store.guard import _created_name, _expected_objects
from karni_historian.store.schema import MIGRATIONS
from karni_historian.store.sqlite_module import statement_cache

SQLITE_PROBE = """
import sys
from karni_historian.store.sqlite_module import load
sqlite = load()
connection = sqlite.connect(":memory:", isolation_level=None)
connection.execute("CREATE TABLE t (x)")
for n in range(400):  # more distinct statements than the cache holds, each run twice
    for _ in range(2):
        connection.execute(f"INSERT INTO t VALUES ({n})")
print(connection.execute("SELECT count(*), sum(x) FROM t").fetchone())
print(sqlite.__name__, "functools" in sys.modules, "datetime" in sys.modules)
import functools, sqlite3
print(sqlite3.Error is sqlite.Error, functools.lru_cache.__module__)
"""


def test_sqlite_loads_without_functools_or_datetime_and_caches_statements():
    probe = subprocess.run(
        [sys.executable, "-c", SQLITE_PROBE], capture_output=True, text=True, check=True
    )
    counts, loaded, later = probe.stdout.splitlines()
    assert counts == "(800, 159600)"
    assert loaded == "_sqlite3 False False"
    assert later == "True functools"  # the real functools loads normally afterwards


def test_with_functools_already_loaded_sqlite_loads_as_usual():
    probe = "import functools; " + SQLITE_PROBE
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "_sqlite3 True False"


def test_the_statement_cache_prepares_each_statement_once_within_its_bound():
    prepared = []
    cached = statement_cache(2)(lambda sql: prepared.append(sql) or sql.upper())
    assert [cached("a"), cached("a"), cached("b"), cached("a")] == ["A", "A", "B", "A"]
    assert prepared == ["a", "b"]
    cached("c")  # full: starts again empty
    cached("a")
    assert prepared == ["a", "b", "c", "a"]
    uncached = statement_cache(0)(lambda sql: prepared.append(sql) or sql)
    uncached("z"), uncached("z")
    assert prepared[-2:] == ["z", "z"]


def test_the_edits_module_reads_the_path_keys_the_model_declares():
    from karni_historian.edits import PATH_KEYS as EDIT_PATH_KEYS
    from karni_historian.model import PATH_KEYS

    assert EDIT_PATH_KEYS == PATH_KEYS  # a copy: the model module is too heavy for the brief


def test_the_guard_knows_every_table_and_index_the_migrations_create():
    pattern = re.compile(
        r"CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX)\s+(?:IF NOT EXISTS\s+)?(\w+)", re.I
    )
    by_pattern = {name for group in MIGRATIONS for s in group for name in pattern.findall(s)}
    # FTS5 keeps the full-text index in tables of its own, named after it
    by_pattern |= {f"search_index_{part}" for part in ("data", "idx", "docsize", "config")}
    assert _expected_objects() == by_pattern
    assert _created_name("create unique index if not exists ix on t(x)") == "ix"
    assert _created_name("CREATE TABLE t(x)") == "t"
    assert _created_name("ALTER TABLE sessions ADD COLUMN model TEXT") is None
    assert _created_name("CREATE VIEW v AS SELECT 1") is None


@pytest.mark.parametrize(
    ("old", "new", "counts"),
    [
        ("a\nb\nc", "a\nB\nc", (1, 1)),
        ("x", "y\n" * 3, (3, 1)),
        ("", "one\ntwo", (2, 0)),
        ("a\nb\nc\nd", "a\nd", (0, 2)),
        ("a\nb\na", "b\nc\na", (1, 1)),  # minimal: difflib's ndiff reports 2 and 2
        ("same\ntext", "same\ntext", (0, 0)),
    ],
)
def test_an_edits_line_counts_are_those_of_a_minimal_line_diff(old, new, counts):
    assert diff_counts(old, new) == counts


def test_a_huge_replacement_counts_its_middle_as_changed_without_a_quadratic_walk():
    old = "\n".join(["head", *(f"old {n}" for n in range(600)), "tail"])
    new = "\n".join(["head", *(f"new {n}" for n in range(600)), "tail"])
    assert diff_counts(old, new) == (600, 600)


TIMESTAMPS = [
    "2026-03-02T10:17:05.123Z",
    "2026-03-02T10:17:05Z",
    "2026-03-02T10:17Z",
    "2026-03-02 23:59:59+05:30",
    "2026-12-31T23:30:00-08:00",
    "2024-02-29T12:00:00.5+00:00",
    "1969-12-31T23:59:59Z",
    "2026-03-02T10:17:05",  # no zone: read as written
    "2026-02-30T10:00:00Z",  # no such day
    "2026-03-02T24:00:00Z",
    "2026-03-02T10:17:05+0530",
    "2026-03-02",
    "yesterday",
    "２０２６-03-02T10:17:05Z",  # full-width digits: only the ASCII form is read by hand
]


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"])
def test_a_requests_minute_is_what_datetime_gives(zone, time_zone):
    time_zone(zone)
    for timestamp in TIMESTAMPS:
        assert _minute(timestamp) == _minute_by_datetime(timestamp), timestamp
    expected = {"UTC": "10:17", "Europe/Berlin": "11:17", "America/New_York": "05:17"}
    if zone in expected:
        assert _minute("2026-03-02T10:17:05.123Z") == f"2026-03-02 {expected[zone]}"
    assert _minute("2026-03-02T23:59:59+05:30") == _minute("2026-03-02T18:29:59Z")


class _Sized(fit._Fitting):
    """A fitting over made-up line sizes, so the search alone is tested."""

    def __init__(self, importances, room, sizes):
        count = len(importances)
        self.ages = [count - i - 1 for i in range(count)]
        self.stretches = [fit.stretch(value) for value in importances]
        self.order = sorted(range(count), key=lambda i: self.ages[i] / self.stretches[i])
        self.loader = type(
            "Loaded", (), {"ids": range(count), "loaded": dict.fromkeys(range(count))}
        )
        self.room = room + 1
        self.visitable = self.room // fit._SHORTEST_LINE + 1
        self.sessions = 1
        self.sizes = {8 * i + t: sizes[i][t - 1] for i in range(count) for t in range(1, 5)}


def _by_bisection(fitting):
    """The pressure search the breakpoints replaced: bisection on a log scale."""
    found = fitting.shown_at(PRESSURE_FLOOR)
    if found is not None:
        return found
    low, high = PRESSURE_FLOOR, 1.0
    while fitting.shown_at(high) is None and high < 1e9:
        low, high = high, high * 4
    for _ in range(40):
        middle = (low * high) ** 0.5
        if fitting.shown_at(middle) is None:
            low = middle
        else:
            high = middle
    return fitting.shown_at(high) or fitting.shown_at(high, strict=False) or {}


def test_the_breakpoint_search_finds_the_tiers_bisection_found():
    chance = random.Random(18)
    for _ in range(400):
        count = chance.randint(1, 150)
        importances = [chance.choice([1, 30, 50, 50, 70, 100]) for _ in range(count)]
        sizes = []
        for _ in range(count):
            anchor = chance.randint(18, 40)
            longer = [anchor + chance.randint(0, extra) for extra in (400, 200, 80)]
            sizes.append([*sorted(longer, reverse=True), anchor])
        room = chance.choice([0, 18, 200, 1100, 4000, chance.randint(0, 8000)])
        fitting = _Sized(importances, room, sizes)
        assert fitting.lowest_fitting_pressure() == _by_bisection(fitting)
