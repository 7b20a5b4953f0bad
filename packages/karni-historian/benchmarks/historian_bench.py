"""Benchmarks of karni-historian: ingest throughput and render time.

Run by ``scripts/bench`` (or directly)::

    python packages/karni-historian/benchmarks/historian_bench.py ingest [MB]
    python packages/karni-historian/benchmarks/historian_bench.py render [COUNT]

``ingest`` writes a generated Claude Code transcript of MB megabytes (default
200) into a temporary folder, ingests it in a child process and prints the
throughput and the child's peak memory; a second, incremental run over the
unchanged file is timed too, and, when orjson (the ``speedups`` extra) is
installed, a fresh ingest without it. ``render`` stores COUNT compartments (default
10,000) and times ``render_history`` over them, and the whole
``karni-historian render`` command. Nothing is written outside the temporary
folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

SESSION = "0b7c3f1e-2d4a-4c5b-9e8f-1a2b3c4d5e6f"


def _assistant(uuid: str, ts: str, message_id: str, block: dict) -> dict:
    """One Claude Code assistant record carrying one content block."""
    return {
        "type": "assistant",
        "uuid": uuid,
        "timestamp": ts,
        "requestId": f"req_{message_id}",
        "message": {
            "id": message_id,
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [block],
        },
    }


def _transcript(path: str, root: str, megabytes: int) -> int:
    """Write a Claude Code shaped transcript of about ``megabytes`` MB; return its size."""
    target = megabytes * 1_000_000
    base = {
        "cwd": root,
        "sessionId": SESSION,
        "version": "2.1.81",
        "gitBranch": "main",
        "userType": "external",
        "entrypoint": "cli",
        "isSidechain": False,
    }
    filler = "def handler(request):\n    return render(request, 'page.html', {'items': items})\n"
    written = 0
    turn = 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < target:
            turn += 1
            ts = f"2026-03-02T10:{turn // 3600 % 60:02d}:{turn % 60:02d}.000Z"
            records = [
                {
                    "type": "user",
                    "uuid": f"u-{turn}",
                    "parentUuid": None,
                    "timestamp": ts,
                    "message": {
                        "role": "user",
                        "content": f"Turn {turn}: refactor views/page_{turn % 97}.py"
                        " and keep the API stable.",
                    },
                },
                _assistant(
                    f"a-{turn}",
                    ts,
                    f"msg_{turn}",
                    {"type": "text", "text": f"I'll edit views/page_{turn % 97}.py."},
                ),
                _assistant(
                    f"b-{turn}",
                    ts,
                    f"msg_{turn}",
                    {
                        "type": "tool_use",
                        "id": f"toolu_{turn}",
                        "name": "Edit",
                        "input": {
                            "file_path": f"{root}/views/page_{turn % 97}.py",
                            "old_string": "items",
                            "new_string": "entries",
                        },
                    },
                ),
                {
                    "type": "user",
                    "uuid": f"r-{turn}",
                    "timestamp": ts,
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"toolu_{turn}",
                                "content": filler * 25,
                            }
                        ],
                    },
                    "toolUseResult": {
                        "filePath": f"{root}/views/page_{turn % 97}.py",
                        "structuredPatch": [],
                    },
                },
                _assistant(
                    f"c-{turn}",
                    ts,
                    f"msg2_{turn}",
                    {"type": "text", "text": f"Done: page_{turn % 97} now uses entries."},
                ),
            ]
            for record in records:
                line = json.dumps({**record, **base}, separators=(",", ":")) + "\n"
                handle.write(line)
                written += len(line)
    return os.path.getsize(path)


_CHILD = r"""
import resource, shutil, sys, time
if sys.argv[2] == "stdlib":
    sys.modules["orjson"] = None  # as without the speedups extra
from karni_historian.fastjson import ACCELERATED
from karni_historian.ingest import ingest
from karni_historian.store import Store
root = sys.argv[1]
if sys.argv[3] == "fresh":
    shutil.rmtree(root + "/.karni", ignore_errors=True)
start = time.perf_counter()
with Store.open(root, create=True) as store:
    report = ingest(store, root)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{elapsed:.3f} {peak:.1f} {report.messages_added} {ACCELERATED}")
"""

_RUNS = (
    ("installed", "fresh", "ingest {size:.0f} MB"),
    ("installed", "again", "ingest again, nothing new"),
    ("stdlib", "fresh", "ingest {size:.0f} MB without orjson"),
)
"""The child runs: which JSON library, a fresh store or the one left before, and the label."""


def bench_ingest(megabytes: int = 200) -> None:
    """Print ingest throughput (MB/s) and peak memory for a generated transcript."""
    from karni_historian.ingest.claude_code import project_key

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "project")
        os.makedirs(root)
        open(os.path.join(root, "manage.py"), "w").close()
        folder = os.path.join(tmp, "claude", "projects", project_key(root))
        os.makedirs(folder)
        size = _transcript(os.path.join(folder, f"{SESSION}.jsonl"), root, megabytes)
        env = {
            **os.environ,
            "CLAUDE_CONFIG_DIR": os.path.join(tmp, "claude"),
            "HOME": tmp,
            "XDG_CONFIG_HOME": os.path.join(tmp, "xdg"),
        }
        accelerated = False
        for json_library, store, label in _RUNS:
            if json_library == "stdlib" and not accelerated:
                break  # orjson is not installed: the first run was already without it
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, root, json_library, store],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            elapsed, peak, added = float(out[0]), float(out[1]), int(out[2])
            accelerated = accelerated or out[3] == "True"
            title = label.format(size=size / 1e6)
            if store == "fresh":
                library = "orjson" if out[3] == "True" else "stdlib json"
                print(
                    f"{title} ({library}): {elapsed:.2f} s, {size / 1e6 / elapsed:.1f} "
                    f"MB/s, {added} messages, peak RSS {peak:.0f} MB"
                )
            else:
                print(f"{title}: {elapsed * 1000:.0f} ms, {added} messages, peak RSS {peak:.0f} MB")


def _compartments(count: int) -> list:
    from karni_historian.model import Compartment

    return [
        Compartment(
            i * 3 + 1,
            i * 3 + 3,
            f"Episode {i}: refactor views/page_{i % 97}.py",
            p1=f"Refactored page_{i % 97} to use entries; kept the API stable. " * 3,
            p2=f"Refactored page_{i % 97}; API stable.",
            p3=f"page_{i % 97} refactor.",
            p4="" if i % 3 else f"page_{i % 97}",
            importance=(i * 37) % 100 + 1,
            start_date="2026-03-02",
            end_date="2026-03-02",
        )
        for i in range(count)
    ]


def store_compartments(root: str, count: int, touching: str | None = None) -> None:
    """Store ``count`` compartments in one session of the project at ``root``.

    With ``touching``, every compartment's first message touched that path.
    """
    from karni_historian.model import TextPart
    from karni_historian.store import RunRecord, Store, parts_to_json

    compartments = _compartments(count)
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            parts = parts_to_json([TextPart("message")])
            store.insert_messages(
                "s",
                [(n, "user", parts, "2026-03-02T10:00:00Z", "") for n in range(1, count * 3 + 1)],
            )
            if touching:
                for compartment in compartments:
                    store.add_file("s", compartment.start, touching, "edit")
        store.publish("s", compartments, [], RunRecord("s", "bench", "ok"))


def shared_sessions(root: str, count: int, files: str | list[str]) -> None:
    """Write ``count`` shared session files under ``.karni/history/``, each about one of ``files``.

    Session ``n`` is about ``files[n % len(files)]`` (a single path: every
    session is about it). Each is a small format-1 file (two compartments, a
    fact, two requests and a note about the file), as a team's ``karni-historian
    share`` leaves them.
    """
    folder = os.path.join(root, ".karni", "history")
    os.makedirs(folder, exist_ok=True)
    paths = [files] if isinstance(files, str) else files
    for n in range(count):
        touching = paths[n % len(paths)]
        session_id = f"5a4ed000-0000-4000-8000-{n:012d}"
        day = f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}"
        compartments = [
            {
                "sequence": k,
                "start": 1 + k * 10,
                "end": 10 + k * 10,
                "title": f"Session {n} episode {k}",
                "type": "implementation",
                "importance": 50,
                "start_date": day,
                "end_date": day,
                "p1": f"Asked to change {touching} ({n}/{k}); edited it and ran the tests.",
                "p2": f"Changed {touching}.",
                "p3": "Changed it.",
                "p4": touching,
            }
            for k in range(2)
        ]
        request = {
            "request": 1,
            "time": f"{day}T10:00:00Z",
            "text": f"Refactor {touching} step {n}",
            "added": 3,
            "removed": 1,
            "edits": [2, 12],
            "ranges": [
                {
                    "ordinal": 2,
                    "position": 0,
                    "time": f"{day}T10:01:00Z",
                    "hash": f"blake2b:{n:016x}",
                    "lines": f"{n:08x} {n + 1:08x} {n + 2:08x}",
                    "loose": f"{n:08x} {n + 1:08x} {n + 2:08x}",
                }
            ],
        }
        document = {
            "format": 1,
            "session": {
                "id": session_id,
                "harness": "claude-code",
                "title": f"Session {n}",
                "started": f"{day}T10:00:00Z",
                "ended": f"{day}T11:00:00Z",
                "messages": 20,
            },
            "compartments": compartments,
            "facts": [
                {
                    "category": "DECISIONS",
                    "content": f"Decision {n} about the file.",
                    "origin": "user",
                    "start": 1,
                    "end": 10,
                    "message": 1,
                }
            ],
            "files": {
                touching: {
                    "requests": [request, {**request, "request": 11}],
                    "notes": [
                        {
                            "kind": "decision",
                            "request": 1,
                            "message": 5,
                            "text": f"Kept the API of {touching} ({n}).",
                            "weight": 70,
                        }
                    ],
                }
            },
            "commits": [
                {
                    "ordinal": 3,
                    "request": 1,
                    "hash": f"{n:07x}",
                    "subject": f"Refactor {touching} step {n}",
                    "time": f"{day}T10:02:00Z",
                    "request_text": f"Refactor {touching} step {n}",
                    "request_time": f"{day}T10:00:00Z",
                }
            ],
        }
        with open(os.path.join(folder, f"{session_id}.json"), "w", encoding="utf-8") as handle:
            handle.write(json.dumps(document, sort_keys=True, indent=1) + "\n")


def bench_render(count: int = 10_000) -> None:
    """Print the time to render ``count`` compartments, as a function and as the command."""
    from karni_historian.brief.render import render_history

    compartments = _compartments(count)
    for budget in (19_500, 60_000):
        best = min(_timed(lambda b=budget: render_history(compartments, b)) for _ in range(5))
        print(f"render_history, {count} compartments, budget {budget}: {best * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "manage.py"), "w").close()
        store_compartments(tmp, count)
        command = [sys.executable, "-m", "karni_historian.cli", "--project", tmp, "render"]
        best = min(
            _timed(lambda: subprocess.run(command, check=True, capture_output=True))
            for _ in range(3)
        )
        print(
            f"karni-historian render (process, store read + render), {count} compartments: "
            f"{best * 1000:.0f} ms"
        )


SEARCH_QUERY = ("orvakelu", "tisamo")
"""The bench's search: two words of middling frequency in :func:`store_for_search`'s text."""


def _vocabulary(size: int = 20_000) -> list[str]:
    """``size`` distinct pseudo-words of two to four syllables, the most frequent first."""
    import random

    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    rng = random.Random(7)
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choices(syllables, k=rng.randint(2, 4)))] = None
    return list(words)


def store_for_search(
    root: str, messages: int = 1_000_000, compartments: int = 100_000, sessions: int = 1_000
) -> dict[str, float]:
    """A store of ``messages`` messages and ``compartments`` compartments, written by SQL.

    The text is drawn from a Zipf-distributed vocabulary, ~24 words a message,
    so that the query words of :data:`SEARCH_QUERY` are neither rare nor common;
    one session a day, the last one today. The index is filled by the store's
    own SQL (``index_rows``), as its writers fill it. Returns the index's size:
    bytes in all, and per message.
    """
    import itertools
    import random

    from karni_historian.store import Store
    from karni_historian.store.search_sql import KIND_COMPARTMENT, KIND_MESSAGE, index_rows

    words = _vocabulary()
    words[300], words[1200] = SEARCH_QUERY  # their ranks fix how often they occur
    weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))
    rng = random.Random(11)

    def text(count: int) -> str:
        return " ".join(rng.choices(words, cum_weights=weights, k=count))

    per_session = messages // sessions
    with Store.open(root, create=True) as store, store.transaction():
        execute, many = store.connection.execute, store.connection.executemany
        many(
            "INSERT INTO sessions (id, source, title, first_ts, last_ts, message_count,"
            " created_at, updated_at) VALUES (?, 'generic', ?, ?, ?, ?, ?, ?)",
            [
                (f"s{n:04d}", text(5), _day(n, sessions), _day(n, sessions), per_session, "t", "t")
                for n in range(sessions)
            ],
        )
        for n in range(sessions):
            rows = [
                (
                    n * per_session + k + 1,
                    f"s{n:04d}",
                    k + 1,
                    "user" if k % 4 == 0 else "assistant",
                    text(rng.randint(8, 40)),
                    _day(n, sessions),
                )
                for k in range(per_session)
            ]
            many(
                "INSERT INTO raw_messages (id, session_id, ordinal, role, parts_json, timestamp)"
                " VALUES (?, ?, ?, ?, json_array(json_object('type', 'text', 'text', ?)), ?)",
                [(i, sid, o, role, body, ts + "T10:00:00Z") for i, sid, o, role, body, ts in rows],
            )
            index_rows(store.connection, KIND_MESSAGE, "m.session_id = ?", (f"s{n:04d}",))
        span = messages // compartments
        crows = [
            (
                i + 1,
                f"s{i * span // per_session:04d}",
                i,
                i * span % per_session + 1,
                i * span % per_session + span,
                text(6),
                text(60),
                text(25),
                text(10),
                text(3),
                _day(i * span // per_session, sessions),
            )
            for i in range(compartments)
        ]
        many(
            "INSERT INTO compartments (id, session_id, sequence, start_message, end_message,"
            " title, p1, p2, p3, p4, start_date, end_date, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?11, ?11, 't')",
            crows,
        )
        index_rows(store.connection, KIND_COMPARTMENT, "1")
        size = execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search_index%'").fetchone()[
            0
        ]
    return {"index_bytes": float(size), "bytes_per_message": size / messages}


def _day(n: int, sessions: int) -> str:
    """The date of session ``n`` of ``sessions``: one a day, the last one today."""
    import datetime

    day = datetime.date.today() - datetime.timedelta(days=sessions - 1 - n)
    return day.isoformat()


def _timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    amount = int(sys.argv[2]) if len(sys.argv) > 2 else None
    if what in ("ingest", "all"):
        bench_ingest(amount or 200)
    if what in ("render", "all"):
        bench_render(amount or 10_000)
