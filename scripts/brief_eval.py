"""How good a file's brief is: recall of labelled must-know items, and lines that waste the cap.

``scripts/eval`` runs this. Each label file under ``eval/labels/`` names one
recorded session (a public transcript in ``../shared/data/real-transcripts/``
or a session bundled in this repository) and, for the files it edited most,
the items an agent needs before editing them: the request, the decisions,
the user's constraints, the failed or undone approaches and the outcomes,
each with the few distinctive terms a brief line must hold to carry it
(``eval/README.md``).

For every session the script makes a fresh project, puts the transcript where
its harness keeps it (:mod:`session_fixtures`), runs a plain
``karni-historian ingest`` (no wrap-up by hand: ``--condense`` adds one) and
then ``karni context --with-history FILE`` for each labelled file: what the
agent actually receives, under the ~300-token cap. It prints, per session and
in total, the recall of the items, the share of brief lines that are filler,
about another file or tool output presented as history, and the brief's size
in tokens; ``--check`` exits 1 when a figure misses its target. Then it runs
``blame_eval.py``: the precision and coverage of ``karni-historian blame`` on
labelled line ranges of real git repositories.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from session_fixtures import install

HERE = Path(__file__).resolve().parent.parent
LABELS = HERE / "eval" / "labels"
DATA = Path(os.environ.get("KARNI_EVAL_DATA", HERE.parent / "shared" / "data" / "real-transcripts"))
BIN = HERE / ".venv" / "bin"
KINDS = ("request", "decision", "constraint", "failed", "outcome")

TARGETS = {"recall": 0.6, "session_recall": 0.4, "bad_share": 0.10}
"""Overall recall at least, every session's recall at least, bad lines at most."""

FILLER = re.compile(
    r"^(?:[-*\d.)\s]*)(?:let me|let's|i'll|i will|i'm going to|now,? (?:let|i)|perfect|great|"
    r"excellent|sure|alright|okay|ok\b|done!?$|you're (?:absolutely )?right)",
    re.I,
)
TOOL_OUTPUT = re.compile(
    r"➜|❯|^\s*[-*]?\s*\$ |Traceback \(most|^\s+at \S+ \(|Debugger attached|npm warn|"
    r"Waiting for the debugger|\x1b\[|[─━]{4,}|^\s*\d+→|<[a-z-]+>.*</[a-z-]+>"
)
NOT_A_LINE = re.compile(r"^(?:\S.*:|… .*)$")
"""A heading (text ending in a colon) or the cap's closing line: not counted as content."""


@dataclass
class Item:
    """One must-know item of a file, found when one brief line holds every term."""

    kind: str
    text: str
    terms: list[str]

    def found_in(self, lines: list[str]) -> bool:
        return any(all(_has_term(line, term) for term in self.terms) for line in lines)


def _has_term(line: str, term: str) -> bool:
    """Whether ``line`` holds one of the ``|``-separated alternatives of ``term``, any case."""
    lowered = line.lower()
    return any(alternative.strip().lower() in lowered for alternative in term.split("|"))


@dataclass
class FileLabels:
    path: str
    items: list[Item]


@dataclass
class Session:
    name: str
    title: str
    harness: str
    source: Path
    files: list[FileLabels]
    extra: list[Path] = field(default_factory=list)


@dataclass
class FileScore:
    path: str
    brief: str
    found: list[Item]
    missed: list[Item]
    lines: int = 0
    bad: dict[str, list[str]] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return (len(self.brief) + 3) // 4


def load_session(path: Path) -> Session:
    """A label file: its session's source and its files' items; errors name the file."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        where, _, relative = data["source"].partition(":")
        base = {"data": DATA, "repo": HERE}[where]
        files = [
            FileLabels(
                entry["path"],
                [Item(i["kind"], i["text"], list(i["terms"])) for i in entry["items"]],
            )
            for entry in data["files"]
        ]
    except (KeyError, TypeError, ValueError) as error:
        raise SystemExit(
            f"eval: {path}: malformed label file ({error!r}); see eval/README.md"
        ) from None
    for entry in files:
        for item in entry.items:
            if item.kind not in KINDS or not item.terms:
                raise SystemExit(
                    f"eval: {path}: {entry.path}: item {item.text!r} needs a kind and terms"
                )
    extra = [base / p for p in data.get("extra", [])]
    return Session(
        path.stem, data.get("title", path.stem), data["harness"], base / relative, files, extra
    )


def _run(args: list[str], root: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=600
    )


def history_block(stdout: str) -> str:
    """The historian's block of ``karni context --with-history`` without its heading line."""
    lines = stdout.splitlines()
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if line.startswith("HISTORY:") and "(historian)" in line
        ),
        None,
    )
    if start is None:
        return ""
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("HISTORY:")), len(lines)
    )
    return "\n".join(lines[start + 1 : end]).strip("\n")


def content_lines(block: str) -> list[str]:
    return [
        line for line in block.splitlines() if line.strip() and not NOT_A_LINE.match(line.strip())
    ]


def other_files_named(line: str, target: str, others: set[str]) -> bool:
    """Whether ``line`` names another edited file and not the target (by file name).

    A numbered line quotes the request that led to the edit: naming another file
    there is the user's own words, not a line about the wrong file.
    """
    if re.match(r"^\d+\. ", line):
        return False
    mine = target.rsplit("/", 1)[-1]
    if mine in line:
        return False
    return any(
        re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line)
        for name in others
        if name != mine
    )


def score_file(labels: FileLabels, block: str, others: set[str]) -> FileScore:
    lines = content_lines(block)
    found = [item for item in labels.items if item.found_in(block.splitlines())]
    missed = [item for item in labels.items if item not in found]
    score = FileScore(
        labels.path,
        block,
        found,
        missed,
        len(lines),
        {"filler": [], "wrong file": [], "tool output": []},
    )
    for line in lines:
        if any(item.found_in([line]) for item in labels.items):
            continue
        if FILLER.match(line.strip()):
            score.bad["filler"].append(line)
        elif TOOL_OUTPUT.search(line):
            score.bad["tool output"].append(line)
        elif other_files_named(line, labels.path, others):
            score.bad["wrong file"].append(line)
    return score


def edited_files(root: str) -> set[str]:
    """The file names of every file the session edited, from the store."""
    import sqlite3

    connection = sqlite3.connect(Path(root, ".karni", "local", "historian.db"))
    try:
        rows = connection.execute("SELECT DISTINCT path FROM message_files WHERE action != 'read'")
        return {row[0].rsplit("/", 1)[-1] for row in rows}
    finally:
        connection.close()


def evaluate(session: Session, *, condense: bool) -> list[FileScore]:
    with tempfile.TemporaryDirectory(prefix="karni-eval-") as work:
        root = os.path.join(work, "project")
        os.makedirs(root)
        Path(root, "manage.py").write_text("")
        env = {**_isolated(work), "COLUMNS": "100"}
        install(session.harness, [session.source, *session.extra], root, env)
        ingest = _run([str(BIN / "karni-historian"), "-q", "ingest"], root, env)
        if ingest.returncode != 0:
            raise SystemExit(f"eval: {session.name}: ingest failed: {ingest.stderr.strip()}")
        if condense:
            _run([str(BIN / "karni-historian"), "-q", "run", "--force"], root, env)
        others = edited_files(root)
        scores = []
        for labels in session.files:
            shown = _run([str(BIN / "karni"), "context", "--with-history", labels.path], root, env)
            scores.append(score_file(labels, history_block(shown.stdout), others))
        return scores


def _isolated(work: str) -> dict[str, str]:
    from session_fixtures import isolated_env

    return isolated_env(work)


@dataclass
class Totals:
    items: int = 0
    found: int = 0
    lines: int = 0
    bad: int = 0
    empty: list[str] = field(default_factory=list)
    by_kind: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0] for k in KINDS})

    def add(self, scores: list[FileScore]) -> None:
        for score in scores:
            self.items += len(score.found) + len(score.missed)
            self.found += len(score.found)
            self.lines += score.lines
            self.bad += sum(len(v) for v in score.bad.values())
            if not score.brief.strip():
                self.empty.append(score.path)
            for item in score.found:
                self.by_kind[item.kind][0] += 1
            for item in [*score.found, *score.missed]:
                self.by_kind[item.kind][1] += 1

    @property
    def recall(self) -> float:
        return self.found / self.items if self.items else 0.0

    @property
    def bad_share(self) -> float:
        return self.bad / self.lines if self.lines else 0.0


def _row(totals: Totals) -> str:
    cells = (totals.items, totals.found, f"{totals.recall:.2f}", totals.lines, totals.bad)
    return " ".join(f"{cell:>6}" for cell in cells)


def report(
    results: list[tuple[Session, list[FileScore]]], verbose: bool
) -> tuple[Totals, list[str]]:
    """Print the figures; return the totals and the targets missed."""
    total = Totals()
    missed: list[str] = []
    columns = ("items", "found", "recall", "lines", "bad")
    print(f"{'session':<44} " + " ".join(f"{c:>6}" for c in columns) + f" {'tokens':>10}")
    for session, scores in results:
        totals = Totals()
        totals.add(scores)
        total.add(scores)
        tokens = [s.tokens for s in scores]
        name = f"{session.name} ({session.harness})"
        average = sum(tokens) // max(1, len(tokens))
        print(f"{name:<44} {_row(totals)} {average:>4}/{max(tokens, default=0):<5}")
        if totals.recall < TARGETS["session_recall"]:
            missed.append(
                f"{session.name}: recall {totals.recall:.2f} < {TARGETS['session_recall']}"
            )
        for path in totals.empty:
            missed.append(f"{session.name}: the brief of {path} is empty")
        if verbose:
            _details(scores)
    kinds = ", ".join(f"{kind} {found}/{count}" for kind, (found, count) in total.by_kind.items())
    print(f"{'total':<44} {_row(total)}")
    print(f"by kind: {kinds}")
    share = f"{total.bad_share:.0%}"
    print(f"bad lines: {total.bad} of {total.lines} ({share}: filler, wrong file or tool output)")
    if total.recall < TARGETS["recall"]:
        missed.append(f"overall recall {total.recall:.2f} < {TARGETS['recall']}")
    if total.bad_share > TARGETS["bad_share"]:
        missed.append(f"bad lines {total.bad_share:.0%} > {TARGETS['bad_share']:.0%}")
    return total, missed


def _details(scores: list[FileScore]) -> None:
    for score in scores:
        print(f"  == {score.path} ({score.tokens} tokens)")
        for line in score.brief.splitlines():
            print(f"     | {line}")
        for item in score.missed:
            print(f"     missed {item.kind}: {item.text} {item.terms}")
        for kind, lines in score.bad.items():
            for line in lines:
                print(f"     {kind}: {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/eval", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when a figure misses its target"
    )
    parser.add_argument(
        "--condense", action="store_true", help="also run `karni-historian run --force`"
    )
    parser.add_argument("-k", dest="only", help="only label files whose name contains this")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print each brief and its misses"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    results = []
    skipped = []
    for path in sorted(LABELS.glob("*.toml")):
        if args.only and args.only not in path.stem:
            continue
        session = load_session(path)
        if not session.source.exists():
            skipped.append(f"{session.name}: {session.source} not found (set KARNI_EVAL_DATA)")
            continue
        results.append((session, evaluate(session, condense=args.condense)))
    for line in skipped:
        print(f"skipped {line}")
    total, missed = report(results, args.verbose)
    # Then blame's precision and coverage on its labelled ranges (scripts/blame_eval.py).
    import blame_eval

    blame_figures, blame_missed = blame_eval.report(blame_eval.run_all(args.only), args.verbose)
    missed += blame_missed
    for line in missed:
        print(f"target missed: {line}")
    if not missed:
        print("every target met" if results else "no labelled session found")
    if args.json:  # last, on one line, for scripts
        figures = {
            "recall": total.recall,
            "bad_share": total.bad_share,
            "items": total.items,
            "missed": missed,
            "skipped": skipped,
            "harnesses": sorted({session.harness for session, _ in results}),
            "blame": blame_figures,
        }
        print(json.dumps(figures))
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
