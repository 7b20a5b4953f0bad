"""What every note of a file shares: the file as one request saw it, and the session around it.

:class:`FileView` holds a file's edits in one request, the net change they
made and how to recognise the agent's words about it (its name, the names
its edits hold); :class:`SessionView` what the whole session knows (every
file it edited, and each landed edit by content, to spot an edit that
writes back an earlier one); :class:`NoteList` collects a file's notes
without repeats. See ``docs/historian/file-notes.md``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from karni_historian.condense.file_notes.changes import Change, change_of, distinctive
from karni_historian.condense.file_notes.prose import is_statement, units, word_count
from karni_historian.condense.file_notes.session import Attempt, Edit, Event, Request, Said
from karni_historian.cut import shorten

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "CHECKS",
    "CONSTRAINT",
    "DECISION",
    "FAILED",
    "KINDS",
    "OUTCOME",
    "REJECTED",
    "STATEMENT",
    "FileView",
    "KnownEdits",
    "Note",
    "NoteList",
    "Prior",
    "SessionView",
    "basename",
    "edit_digests",
    "key_of",
    "names_phrase",
    "quoted",
    "worth_keeping",
]

FAILED = "failed"

REJECTED = "rejected"

DECISION = "decision"

CONSTRAINT = "constraint"

OUTCOME = "outcome"

KINDS = (FAILED, REJECTED, DECISION, CONSTRAINT, OUTCOME)
"""The kinds of notes, in the order a brief shows them."""

NOTE_CHARS = 220
"""The longest note text stored."""

CHECKS = ("test", "typecheck", "lint", "build")

STATEMENT = re.compile(
    r"\b(?:add(?:ed|s)|chang(?:ed|es)|replac(?:ed|es)|remov(?:ed|es)|renam(?:ed|es)|us(?:es|ed)|"
    r"return(?:s|ed)|now|instead|because|so that|falls? back|fix(?:ed|es)|moved|keeps?|stays?|"
    r"defaults? to|maps?|wraps?|calls?|handles?|ignores?|no longer|only|shows?|marks?|lists?|"
    r"hides?|filters?|sets?|clears?|skips?|logs?|raises?|throws?|checks?|sorts?|renders?|"
    r"stores?|saves?|loads?|sends?|accepts?|rejects?|subclass(?:es)?|inherits?)\b",
    re.I,
)


_DATA_FORMATS = frozenset(
    {"json", "jsonc", "yaml", "yml", "toml", "ini", "cfg", "css", "lock", "env"}
)
"""Files whose names are keys and values: what their edits add and remove is not code."""

_FILE_WORD = re.compile(r"[\w.-]+\.[A-Za-z0-9]{1,6}\b")

_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")


@dataclass(frozen=True)
class Note:
    """One line of a file's history."""

    path: str
    request: int
    ordinal: int
    kind: str
    text: str
    weight: int


def basename(path: str) -> str:
    """The last part of a POSIX path."""
    return path.rsplit("/", 1)[-1]


def key_of(text: str) -> str:
    """``text`` lower-cased, letters, digits and ``_`` only: what repeated notes compare by."""
    return re.sub(r"\W+", "", text.lower())


def quoted(words: str) -> str:
    """Someone's words as a note quotes them."""
    return f"«{words}»"


def normal(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Prior:
    """What a reading of a session knows of the requests read before it.

    Attributes:
        paths: Every file the session's edits named so far.
        digests: ``(ordinal, path, forward, inverse)`` of its earlier landed edits.
        load: Reads back an earlier edit, ``(ordinal, path, forward digest) -> Edit | None``,
            to say what an edit that undoes it undid.
    """

    paths: set[str] = field(default_factory=set)
    digests: list[tuple[int, str, str, str]] = field(default_factory=list)
    load: Callable[[int, str, str], Edit | None] | None = None


class KnownEdits:
    """Landed edits by file and content: those read (whole) and earlier ones (by digest)."""

    def __init__(self, requests: Iterable[Request], prior: Prior) -> None:
        self._load = prior.load
        self._by_forward: dict[tuple[str, str], list[tuple[int, Edit | None]]] = {}
        for ordinal, path, forward, _inverse in prior.digests:
            self._by_forward.setdefault((path, forward), []).append((ordinal, None))
        for request in requests:
            for attempt in request.attempts:
                for edit in attempt.edits():
                    if edit.error is None and edit.pairs:
                        forward, _inverse = edit_digests(edit.pairs)
                        key = (edit.path, forward)
                        self._by_forward.setdefault(key, []).append((edit.ordinal, edit))

    def latest(self, path: str, forward: str, before: int) -> Edit | None:
        """The latest edit of ``path`` before message ``before`` whose digest is ``forward``."""
        earlier = [
            found for found in self._by_forward.get((path, forward), ()) if found[0] < before
        ]
        if not earlier:
            return None
        ordinal, known = earlier[-1]
        if known is None and self._load is not None:
            known = self._load(ordinal, path, forward)
        return known or Edit(ordinal, path, "edit", [], None, None)


class SessionView:
    """What the notes of a session's files share: the files edited, their edits by content.

    Args:
        paths: Every file the session's edits named.
        earlier: ``(path, forward digest, before) -> Edit | None``, the latest
            landed edit of ``path`` before message ``before`` with that digest
            (an edit known only by its digest comes back without its texts
            when it cannot be read again).
    """

    def __init__(
        self, paths: Iterable[str], earlier: Callable[[str, str, int], Edit | None]
    ) -> None:
        self.names = {basename(p) for p in paths}
        self._stems = {name: name.split(".")[0].lower() for name in self.names}
        self._long_stems: set[str] | None = None
        self._stem_count: dict[str, int] = {}
        for stem in self._stems.values():
            self._stem_count[stem] = self._stem_count.get(stem, 0) + 1
        self._earlier = earlier

    @classmethod
    def of_requests(cls, requests: list[Request], prior: Prior) -> SessionView:
        """The view of a reading whose requests are all in memory."""
        paths = prior.paths | {p for r in requests for p in r.all_edited()}
        return cls(paths, KnownEdits(requests, prior).latest)

    def stems_besides(self, name: str) -> set[str]:
        """The stems (names without extension) of the other edited files, four letters or more."""
        if self._long_stems is None:
            self._long_stems = {stem for stem in self._stems.values() if len(stem) >= 4}
        own = self._stems.get(name, name.split(".")[0].lower())
        shared = self._stem_count.get(own, 0) > (1 if name in self._stems else 0)
        return self._long_stems if shared else self._long_stems - {own}

    def files_named_in(self, text: str) -> set[str]:
        """The edited files ``text`` names (by file name)."""
        return {word for word in _FILE_WORD.findall(text) if word in self.names}

    def undone_by(self, edit: Edit) -> Edit | None:
        """The latest earlier edit of the same file that ``edit`` writes back exactly."""
        _forward, inverse = edit_digests(edit.pairs)
        return self._earlier(edit.path, inverse, edit.ordinal)


def edit_digests(pairs: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """Digests of an edit's ``(replaced, written)`` pairs, and of the edit that would undo it."""
    texts = [(normal(old), normal(new)) for old, new in pairs]
    forward = _digest([text for pair in texts for text in pair])
    inverse = _digest([text for old, new in reversed(texts) for text in (new, old)])
    return forward, inverse


def _digest(texts: list[str]) -> str:
    joined = "\x00".join(texts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(joined, digest_size=12).hexdigest()


class FileView:
    """One file as a request saw it: its edits, what they changed, how to tell talk of it."""

    def __init__(self, path: str, request: Request, session: SessionView) -> None:
        self.path = path
        self.name = basename(path)
        self.data = self.name.rsplit(".", 1)[-1].lower() in _DATA_FORMATS
        self.request = request
        self.edits = [e for a in request.attempts for e in a.edits(path)]
        self.landed = [e for e in self.edits if e.error is None]
        self.change: Change = change_of(pair for e in self.landed for pair in e.pairs)
        self.text = "\n".join(new + "\n" + old for e in self.edits for old, new in e.pairs)
        self.groups = {e.group for e in self.edits}
        self.session = session
        self.other_stems = session.stems_besides(self.name)
        self._foreign: set[str] | None = None

    def _holds(self, token: str) -> bool:
        """Whether the file's edits hold ``token`` whole (``a_b`` is not in ``a_b_c``)."""
        start = self.text.find(token)
        while start >= 0:
            end = start + len(token)
            before = self.text[start - 1] if start else " "
            after = self.text[end] if end < len(self.text) else " "
            if not (before.isalnum() or before in "_$") and not (after.isalnum() or after in "_$"):
                return True
            start = self.text.find(token, start + 1)
        return False

    @property
    def foreign(self) -> set[str]:
        """The names the request's edits of other files added, that this file's never hold."""
        if self._foreign is None:
            others = [
                pair
                for attempt in self.request.attempts
                for edit in attempt.edits()
                if edit.path != self.path and edit.error is None
                for pair in edit.pairs
            ]
            added = change_of(others).added if others else []
            self._foreign = {n for n in added if distinctive(n) and n not in self.text}
        return self._foreign

    def relevance(self, sentence: str, *, alone: bool = False) -> float:
        """How much ``sentence`` is about this file (0: not at all).

        Its name counts 2, each of its distinctive names 1, another backticked
        word of its edits a third; a sentence naming another edited file and
        not this one is not about it. ``alone``: the worker edited only this
        file, so whatever it says after the edit is about it.
        """
        hits = 2.0 if self.name in sentence else 0.0
        for token in _BACKTICKED.findall(sentence):
            token = token.strip().rstrip("()")
            if len(token) >= 2 and self._holds(token):
                hits += 1.0 if distinctive(token) else 0.34
        hits += sum(
            1 for name in self.change.mentioned if name in sentence and f"`{name}" not in sentence
        )
        if self.name not in sentence and self.session.files_named_in(sentence) - {self.name}:
            return 0.0
        foreign = sum(1 for name in self.foreign if name in sentence)
        if foreign > hits:  # it speaks of what the request changed in another file
            return 0.0
        return max(hits, 1.0) if alone else hits

    def describe(self, attempt: Attempt, taken_out: set[str] | None = None) -> tuple[str, bool]:
        """What ``attempt`` did to the file in the fewest words, and whether that names anything.

        The names the edits added (only those later taken out again, when
        ``taken_out`` says which: what was rejected) and removed, else the
        agent's best statement about it, else a count of edits.
        """
        landed = [e for e in attempt.edits(self.path) if e.error is None]
        change = change_of(pair for e in landed for pair in e.pairs)
        if taken_out and set(change.added) & taken_out:
            change.added = [name for name in change.added if name in taken_out]
            change.removed = []
        named = names_phrase(change, 4)
        if named:
            return named, True
        sentence = next(iter(self._statements(attempt)), None)
        if sentence is not None:
            return shorten(sentence[1], 80), True
        count = len(landed)
        return f"{count} edit{'s' if count != 1 else ''} of {self.name}", False

    def _window(self, attempt: Attempt) -> list[Event] | None:
        """The events that can speak of the file: from its first edit until its worker moves on.

        The worker has moved on at its first edit of another file after its
        last edit of this one (later statements are about that work), but the
        attempt's closing words always count: they sum the attempt up.
        """
        events = attempt.events
        mine = [i for i, e in enumerate(events) if isinstance(e, Edit) and e.path == self.path]
        if not mine:
            return None
        end = len(events)
        for index in range(mine[-1] + 1, len(events)):
            event = events[index]
            if isinstance(event, Edit) and event.group in self.groups and event.error is None:
                end = index
                break
        window = events[mine[0] + 1 : end]
        closing = next((e for e in reversed(events) if isinstance(e, Said)), None)
        if closing is not None and closing not in window and events.index(closing) > mine[0]:
            window.append(closing)
        return window

    def _alone(self, attempt: Attempt, group: str | None) -> bool:
        """Whether the worker ``group`` edited only this file in ``attempt``."""
        paths = {e.path for e in attempt.edits() if e.group == group and e.error is None}
        return paths == {self.path}

    def _statements(self, attempt: Attempt) -> list[tuple[int, str]]:
        """The agent's statements about the file in ``attempt``, best first (score, sentence)."""
        found: list[tuple[int, str]] = []
        seen: set[str] = set()
        window = self._window(attempt)
        if window is None:
            return found
        for event in window:
            if not isinstance(event, Said) or (
                event.group not in self.groups and event.group is not None
            ):
                continue
            alone = self._alone(attempt, event.group)
            for sentence in units(event.text):
                key = sentence.lower()
                if key in seen or not worth_keeping(sentence):
                    continue
                said = alone and bool(STATEMENT.search(sentence) or "`" in sentence)
                relevance = self.relevance(sentence, alone=said)
                if relevance >= 1:
                    seen.add(key)
                    score = int(relevance * 10) + (15 if STATEMENT.search(sentence) else 0)
                    found.append((score, sentence))
        found.sort(key=lambda item: -item[0])
        return found


def worth_keeping(sentence: str) -> bool:
    """Whether an agent's sentence states something: no narration, question, claim or advice."""
    return 4 <= word_count(sentence) <= 60 and is_statement(sentence)


def names_phrase(change: Change, limit: int = 6) -> str:
    """``adds `a`, `b`; removes `c` `` from the distinctive names a change added and removed."""
    added = [name for name in change.added if distinctive(name)]
    removed = [name for name in change.removed if distinctive(name)]
    parts = []
    if added:
        verb = "defines" if change.created else "adds"
        parts.append(f"{verb} " + ", ".join(f"`{n}`" for n in added[:limit]))
    if removed:
        parts.append("removes " + ", ".join(f"`{n}`" for n in removed[: max(2, limit // 2)]))
    return "; ".join(parts)


class NoteList:
    """The notes of one file in one request, collected as they are found."""

    def __init__(self, view: FileView) -> None:
        self.view = view
        self.items: list[Note] = []
        self.seen: set[str] = set()

    def add(self, kind: str, ordinal: int, text: str, weight: int) -> None:
        """Add a note, on one line and cut to :data:`NOTE_CHARS`, unless it repeats one."""
        text = shorten(" ".join(text.split()), NOTE_CHARS)
        key = re.sub(r"\W+", " ", text.lower()).strip()
        if key and key not in self.seen:
            self.seen.add(key)
            self.items.append(
                Note(self.view.path, self.view.request.ordinal, ordinal, kind, text, weight)
            )
