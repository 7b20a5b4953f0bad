"""The blame eval's cases from real public sessions, and their label files.

Each case replays one public transcript of ``../shared/data/real-transcripts/``
(or ``$KARNI_EVAL_DATA``) into a fresh git repository
(``scripts/blame_replay.py``), installs the transcript for that folder where
its harness keeps it, and scores ``karni-historian blame`` against the label
file ``eval/blame/<case>.toml``: every run of non-blank lines of each edited
file, with the request that wrote it (its number among the session's prompts
and its first words) or none (the file as the session first read it, a
person's change). ``python scripts/blame_real.py`` writes the label files
again from the replay; they are committed, and were checked by hand against
the transcripts (``eval/README.md``). Without the public transcripts the
cases are skipped with one line.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import blame_replay
from blame_replay import Replay, ranges

HERE = Path(__file__).resolve().parent.parent
LABELS = HERE / "eval" / "blame"
DATA = Path(
    os.environ.get("KARNI_EVAL_DATA") or HERE.parent / "shared" / "data" / "real-transcripts"
)
WORDS = 60
"""How many characters of a request's text a label keeps (whitespace collapsed)."""


@dataclass(frozen=True)
class Source:
    """One public session: its file under the data folder, its harness, the folder it names."""

    name: str
    title: str
    source: str
    harness: str
    recorded: str
    squash: bool = False

    def steps(self, root: Path) -> list[blame_replay.Step]:
        """Its steps, as if recorded in ``root`` (as the installed transcript says)."""
        read = blame_replay.pi_steps if self.harness == "pi" else blame_replay.claude_steps
        return blame_replay.moved(read(DATA / self.source, self.recorded), self.recorded, str(root))


VIEWER = "d-kimuson-claude-code-viewer/"
SOURCES = [
    Source(
        "pi-themes",
        "Pi: a theme system ported over a TUI, one session of 88 prompts, its own commit",
        "badlogic-pi-mono/large-session.jsonl",
        "pi",
        "/Users/badlogic/workspaces/pi-mono",
    ),
    Source(
        "pi-themes-squashed",
        "The same Pi session on a branch a person squash-merges",
        "badlogic-pi-mono/large-session.jsonl",
        "pi",
        "/Users/badlogic/workspaces/pi-mono",
        squash=True,
    ),
    Source(
        "claude-code-viewer-todo-app",
        "Claude Code: /orchestrator drives subagents that write a todo app",
        VIEWER + "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "claude-code",
        "/path/to/Demo",
    ),
    Source(
        "claude-code-viewer-claude-md",
        "Claude Code: a MultiEdit of CLAUDE.md",
        VIEWER + "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        "claude-code",
        "/path/to/Demo",
    ),
]
"""The public sessions with edits a replay can rebuild (the others edit nothing)."""
REAL_NAMES = frozenset(source.name for source in SOURCES)


def short(text: str) -> str:
    """A request's first words, as labels keep them."""
    return " ".join(text.split())[:WORDS]


def session_id(source: Source) -> str:
    """The session's id as the historian names it."""
    first = json.loads((DATA / source.source).read_text(encoding="utf-8").split("\n")[0])
    if source.harness == "pi":
        return first["id"]
    return Path(source.source).stem


# ---------------------------------------------------------------- writing the labels


def _toml(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("\x7f", "\\u007f")


def label_text(source: Source, done: Replay) -> str:
    """The label file of one case, from its replay."""
    lines = [
        f"title = {_toml(source.title)}",
        f"source = {_toml('data:' + source.source)}",
        f"harness = {_toml(source.harness)}",
        f"session = {_toml(session_id(source))}",
        f"squash = {str(source.squash).lower()}",
        "",
    ]
    for path in sorted(done.files):
        lines_of = done.files[path]
        if lines_of.broken:
            lines += [
                "[[skipped]]",
                f"path = {_toml(path)}",
                f"reason = {_toml(lines_of.broken)}",
                "",
            ]
    for path in sorted(p for p in done.edited if not done.files[p].broken):
        text = blame_replay.split(done.files[path].text)
        lines += ["[[files]]", f"path = {_toml(path)}", "ranges = ["]
        for first, last, owner in ranges(done.files[path]):
            who = ""
            if owner is not None:
                asked = _toml(short(done.requests[owner]))
                who = f", request = {owner + 1}, at = {_toml(done.stamps[owner])}, asked = {asked}"
            words = _toml(text[first - 1].strip()[:WORDS])
            lines.append(f"  {{ lines = [{first}, {last}], first = {words}{who} }},")
        lines += ["]", ""]
    return "\n".join(lines)


def write_labels() -> None:
    """Replay every source in a temporary repository and write its label file."""
    import tempfile

    from git_sessions import Project

    LABELS.mkdir(parents=True, exist_ok=True)
    for source in SOURCES:
        with tempfile.TemporaryDirectory(prefix="karni-blame-labels-") as work:
            project = Project(Path(work) / "project")
            done = blame_replay.replay(project, source.steps(project.root), source.squash)
            text = label_text(source, done).replace(str(project.root), source.recorded)
        (LABELS / f"{source.name}.toml").write_text(text, encoding="utf-8")
        print(f"wrote eval/blame/{source.name}.toml")


# ---------------------------------------------------------------- the eval's cases


@dataclass
class RealCase:
    """A case of ``blame_eval.run_all``: builds the repository, says how to install the session."""

    source: Source
    data: dict

    @property
    def install(self) -> tuple[str, Path]:
        return self.source.harness, DATA / self.source.source

    def __call__(self, project) -> list:
        from blame_eval import Label

        steps = self.source.steps(project.root)
        done = blame_replay.replay(project, steps, self.source.squash)
        labels = []
        for entry in self.data.get("files", []):
            text = blame_replay.split(done.files[entry["path"]].text)
            for item in entry["ranges"]:
                first, last = item["lines"]
                there = text[first - 1].replace(str(project.root), self.source.recorded)
                if not there.strip().startswith(item["first"]):
                    raise SystemExit(
                        f"eval: blame {self.source.name}: {entry['path']}:{first} moved"
                    )
                labels.append(
                    Label(
                        entry["path"],
                        item["first"],
                        text[last - 1],
                        self.data["session"] if "request" in item else None,
                        item.get("asked"),
                        (first, last),
                        item.get("at"),
                    )
                )
        return labels


def real_cases() -> dict[str, RealCase]:
    """The real cases whose transcript is on this machine; one line for each one that is not."""
    cases = {}
    absent = [source.name for source in SOURCES if not (DATA / source.source).is_file()]
    if absent:
        print(f"blame: skipped the real sessions {', '.join(absent)}: not in {DATA}")
    for source in SOURCES:
        if source.name not in absent:
            labels = (LABELS / f"{source.name}.toml").read_text(encoding="utf-8")
            cases[source.name] = RealCase(source, tomllib.loads(labels))
    return cases


if __name__ == "__main__":
    sys.path.insert(0, str(HERE / "packages" / "karni-historian" / "tests"))
    write_labels()
