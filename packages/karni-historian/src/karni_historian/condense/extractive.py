"""``local/extractive``: the built-in historian that needs no model.

It reads a chunk (see :mod:`karni_historian.condense.chunk`) and the raw messages behind
it, and writes the same XML a model-backed historian would (``docs/historian/validation.md``),
so the output goes through the same validator
(:mod:`karni_historian.condense.compartment_xml`); a run takes what parsing that XML
gives without writing it (:func:`summarize_parsed`). Everything is extracted, nothing is
invented, and the same input always gives the same bytes.

How it decides, in short:

- **Episodes.** A new compartment starts at a meaningful user turn that opens
  a new task. Acknowledgements ("ok", "thanks"), follow-ups ("also…",
  "and…") and corrections ("no, …", "actually…", "instead…") stay in the
  current episode; after a commit (a finished work phase) any real request
  starts a new one, and an episode of more than 40 lines is closed at the next
  user turn. Episodes tile the chunk, so coverage is always complete.
- **Tiers.** p1 keeps the request, the user's constraints and corrections
  verbatim, the assistant's key sentences, the files edited and the commits;
  p2 keeps the request, decisions, constraints, the outcome, files and
  commits; p3 is one or two sentences; p4 is an anchor of commit hashes and
  edited file names, or empty (title only) for low-importance episodes with
  nothing distinctive. Commit hashes appear at every non-empty tier.
- **Importance** (1–100) starts at 35 and rises with real signals: user
  constraints (+20), decisions (+15), commit clusters (+10 each, at most +20),
  reverts (+10), edits (+5), fixes with edits (+5); episodes with no edit,
  commit or decision lose 10.
- **Facts** are sentences promoted to project memory by category: user
  prohibitions to ``CONSTRAINTS``, user workflow rules ("always…", "from now
  on…", or "must…" that is not part of a decision) to ``PROJECT_RULES``,
  decisions to ``ARCHITECTURE``, settings with values to ``CONFIG_VALUES``,
  user naming conventions ("named after…", "use snake_case") to ``NAMING``; a
  one-off action such as "rename X to Y" is not a naming rule. When a sentence
  is a request followed by its reason ("Revert X: we decided Y"), only the
  reason is promoted. Questions and fragments are never promoted.
"""

from __future__ import annotations

from karni_historian.condense.file_notes.commands import command_of, read_run
from karni_historian.condense.file_notes.prompts import (
    CONTINUATION,
    LOCAL,
    prompt_kind,
    without_pasted_output,
)
from karni_historian.condense.file_notes.prose import is_statement, units
from karni_historian.condense.work_phases import commit_of, input_path
from karni_historian.model import Compartment, Fact, Message, TextPart, ToolPart
from karni_historian.prompts import prompt_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from karni_historian.condense.chunk import Chunk, ChunkLine
    from karni_historian.condense.compartment_xml import ParsedOutput

__all__ = [
    "HISTORIAN_NAME",
    "MAX_EPISODE_LINES",
    "condense",
    "episodes",
    "summarize",
    "summarize_parsed",
]

HISTORIAN_NAME = "local/extractive"
"""The historian's name as runs record it."""

MAX_EPISODE_LINES = 40
"""An episode longer than this closes at the next real user request."""

_READ_TOOLS = frozenset({"read", "view", "notebookread", "read_file", "cat"})
_EDIT_TOOLS = frozenset(
    {"edit", "write", "multiedit", "notebookedit", "str_replace_editor", "create", "patch"}
)
_ACKS = frozenset(
    [
        "ok",
        "okay",
        "k",
        "y",
        "yes",
        "yep",
        "yeah",
        "sure",
        "thanks",
        "thank",
        "you",
        "thx",
        "continue",
        "go",
        "on",
        "go",
        "ahead",
        "proceed",
        "do",
        "it",
        "lgtm",
        "looks",
        "good",
        "great",
        "good",
        "perfect",
        "nice",
        "right",
        "correct",
        "fine",
        "cool",
        "done",
    ]
)
_CONTINUATIONS = (
    "also",
    "and",
    "then",
    "but",
    "plus",
    "additionally",
    "one more",
    "what about",
    "why",
    "no",
    "not",
    "nope",
    "actually",
    "instead",
    "wait",
    "hmm",
    "try again",
    "still",
    "same",
    "that",
    "this",
    "it",
    "commit",
    "push",
    "merge",
    "open a pr",
    "ship it",
)
_CONTINUATION_WORDS = frozenset(_CONTINUATIONS)
_CONTINUATION_PREFIXES = tuple(c + " " for c in _CONTINUATIONS)
_LEADING_ACK = ("ok", "okay", "yes", "yep", "great", "good", "thanks", "perfect", "nice", "cool")

_I = 2  # re.IGNORECASE, without importing re at module load
_PATTERNS: dict[str, tuple[str, int]] = {
    "words": (r"[a-z0-9']+", _I),
    "polite": (
        r"^(?:please|pls|ok(?:ay)?,?|so,?|hey,?|now,?|next,?|also,?|can you|could you|"
        r"would you|will you|i want you to|i'd like you to|i need you to|let's|lets|"
        r"we need to|we should|i want to|help me(?: to)?)\s+",
        _I,
    ),
    "decision": (
        r"\b(decid(?:e|ed|ing)|decision|we(?:'ll| will) (?:use|go with|keep)|going with|"
        r"let's (?:use|go with|keep|switch)|switch(?:ed)? to|instead of|chose|"
        r"opt(?:ed)? for|settled on|agreed)\b",
        _I,
    ),
    "prohibit": (
        r"\b(never|must not|mustn't|do not|don't|cannot|can't|should not|shouldn't|"
        r"not allowed|forbidden|avoid)\b",
        _I,
    ),
    "rule": (r"\b(always|from now on|every time|make sure)\b", _I),
    "soft_rule": (r"\b(must|required)\b", _I),
    "revert": (r"\b(revert(?:ed|ing|s)?|roll(?:ed)? ?back|undo|undid|back(?:ed)? out)\b", _I),
    "fix": (r"\b(fix(?:ed|es|ing)?|bug|error|fail(?:s|ed|ing|ure)?|broken|crash(?:es|ed)?)\b", _I),
    "config": (
        r"\b(timeout|port|limit|max(?:imum)?|min(?:imum)?|default|threshold|retries|"
        r"interval|ttl|version|budget)\b",
        _I,
    ),
    "value": (r"\d|=|:\s*\S", 0),
    "naming": (
        r"\b(naming|named? (?:after|in|using|like)|(?:should|must) be (?:called|named)|"
        r"are (?:called|named)|call (?:them|these|those|every|each|all)|"
        r"(?:prefix|suffix)(?:ed|es)? (?:with|by)|snake_case|camel_?case|kebab-case|"
        r"pascal_?case|upper_case)\b",
        _I,
    ),
    "test": (r"\b(pytest|tests?|spec)\b", _I),
    "correction": (r"^(?:no|not|nope|actually|instead|wait|but|don't|do not)\b", _I),
    "result": (
        r"\b(changed|added|fixed|implemented|created|updated|removed|froze|wrote|moved|"
        r"renamed|replaced|refactored|reverted|passes|passing|works|now)\b",
        _I,
    ),
    "progress": (
        r"^(?:i|i'll|i will|i'm|i've|i have|let me|let's|now|next|first|then|done|"
        r"ok(?:ay)?|great|perfect|sure)\b",
        _I,
    ),
    "undo_command": (r"\bgit\s+(?:revert|restore|checkout\s+--|reset\s+--hard|stash)\b", 0),
    "failed_run": (r"\b\d+ (?:failed|errors?)\b|\bFAILED\b|\bTraceback\b", 0),
    "lead": (r"^(?:no|nope|ok(?:ay)?|also|and|so|but|well|yes|right|actually)\b[,:]?\s+", _I),
    "sentence_end": (r"(?<=[.!?]) ", 0),
    "opinion": (
        r"^(?:hm+,?\s+|ok(?:ay)?,?\s+|well,?\s+)*i (?:do ?n[o']?t |don't )?(?:think|tink|guess|"
        r"believe|understand|know|wonder|suppose|see|feel)\b",
        _I,
    ),
}
"""The sentence patterns the extractive historian reads with, compiled on first use."""

_WORD_PATTERNS = frozenset(
    (
        "decision",
        "prohibit",
        "rule",
        "soft_rule",
        "revert",
        "fix",
        "config",
        "naming",
        "test",
        "result",
        "user_signal",
    )
)
"""The case-insensitive patterns written in lower case, only ever asked whether they match."""

_LITERALS: dict[str, tuple[str, ...]] = {
    "decision": (
        "agreed", "chose", "decid", "decision", "going with", "instead of", "let's ", "opt",
        "settled on", "switch", "we will ", "we'll ",
    ),
    "prohibit": (
        "avoid", "can't", "cannot", "do not", "don't", "forbidden", "must", "never",
        "not allowed", "should",
    ),
    "rule": ("always", "every time", "from now on", "make sure"),
    "soft_rule": ("must", "required"),
    "revert": ("back", "revert", "roll", "undid", "undo"),
    "fix": ("broken", "bug", "crash", "error", "fail", "fix"),
    "config": (
        "budget", "default", "interval", "limit", "max", "min", "port", "retries", "threshold",
        "timeout", "ttl", "version",
    ),
    "naming": (
        "are called", "are named", "be called", "be named", "call ", "camel", "kebab-case", "nam",
        "pascal", "prefix", "snake_case", "suffix", "upper_case",
    ),
    "test": ("spec", "test"),
    "result": (
        "added", "changed", "created", "fixed", "froze", "implemented", "moved", "now", "pass",
        "refactored", "removed", "renamed", "replaced", "reverted", "updated", "works", "wrote",
    ),
}  # fmt: skip
"""Per word pattern, strings one of which every match contains (in lower-cased ASCII text).

Looking for them is cheaper than the search, which runs only when one is
there; the tests derive each pattern's literal prefixes to check the lists.
"""

_USER_SIGNALS = ("decision", "prohibit", "rule", "soft_rule", "config", "naming")
"""What a user's sentence is asked about; :func:`_any_user_signal` asks all at once."""
_PATTERNS["user_signal"] = ("|".join(f"(?:{_PATTERNS[n][0]})" for n in _USER_SIGNALS), _I)
_LITERALS["user_signal"] = tuple(dict.fromkeys(w for n in _USER_SIGNALS for w in _LITERALS[n]))


class _Patterns:
    """:data:`_PATTERNS` as attributes, each compiled on first use and kept on the instance.

    With ``case_sensitive`` the flags leave out ``re.IGNORECASE``: what
    :func:`_has` searches lower-cased ASCII text with.
    """

    def __init__(self, *, case_sensitive: bool = False) -> None:
        self._case_sensitive = case_sensitive

    def __getattr__(self, name: str) -> Any:
        import re

        source, flags = _PATTERNS[name]
        if self._case_sensitive:
            flags &= ~re.IGNORECASE
        pattern = re.compile(source, flags)
        setattr(self, name, pattern)
        return pattern


_P = _Patterns()
_LOWER_P = _Patterns(case_sensitive=True)


def _has(name: str, text: str) -> bool:
    """Whether ``text`` carries the pattern ``name`` (one of :data:`_WORD_PATTERNS`).

    ASCII text is lower-cased and searched without ``re.IGNORECASE``: for
    these lower-case patterns the same answer, several times faster; and
    only when it holds one of the pattern's :data:`_LITERALS`.
    """
    if text.isascii():
        lowered = text.lower()
        for literal in _LITERALS[name]:
            if literal in lowered:
                return getattr(_LOWER_P, name).search(lowered) is not None
        return False
    return getattr(_P, name).search(text) is not None


def _any_user_signal(text: str) -> bool:
    """Whether any of :data:`_USER_SIGNALS` matches ``text``: one search, not six.

    A search for alternatives finds a match exactly when one of them would.
    """
    return _has("user_signal", text)


def _clause(sentence: str, pattern: str) -> str:
    """The part of ``sentence`` after a leading ``request: `` that carries ``pattern`` (a name).

    "Revert the change in cart.py: we decided pricing must stay separate" is a
    request followed by the durable reason; only the reason is a fact.
    """
    head, colon, tail = sentence.partition(": ")
    if colon and _has(pattern, tail) and not _has(pattern, head) and len(_words(tail)) >= 4:
        return tail[:1].upper() + tail[1:]
    return sentence


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``, whitespace collapsed.

    A sentence ends at a line break, and at the whitespace after a ``.``,
    ``!`` or ``?``: after a word that ends with one of them.
    """
    split: Callable[[str], list[str]] = _P.sentence_end.split
    if "\n" not in text:  # one line: the loop below, once
        collapsed = " ".join(text.split())
        if ". " in collapsed or "! " in collapsed or "? " in collapsed:
            return split(collapsed)
        return [collapsed] if collapsed else []
    out: list[str] = []
    for line in text.split("\n"):
        collapsed = " ".join(line.split())
        if ". " in collapsed or "! " in collapsed or "? " in collapsed:
            out += split(collapsed)  # words are single-spaced: end at a space after . ! ?
        elif collapsed:
            out.append(collapsed)
    return out


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


_WORDS: dict[str, tuple[str, ...]] = {}
"""Sentences already split into words: each is asked about several times per episode."""

_WORDS_LIMIT = 4096


def _words(text: str) -> tuple[str, ...]:
    words = _WORDS.get(text)
    if words is None:
        if len(_WORDS) >= _WORDS_LIMIT:
            _WORDS.clear()
        if text.isascii():  # lower-cased first: the same words (as for _has)
            words = tuple(_LOWER_P.words.findall(text.lower()))
        else:
            words = tuple(w.lower() for w in _P.words.findall(text))
        _WORDS[text] = words
    return words


def _classifiable(sentence: str) -> bool:
    """Whether a sentence may carry a decision, a rule or a setting: no question, no fragment."""
    return not (sentence.endswith("?") or len(_words(sentence)) < 4 or len(sentence) > 220)


def _user_texts(by_ordinal: dict[int, Message], chunk: Chunk | None = None) -> dict[int, str]:
    """The meaningful text of each user message, by ordinal: asked about more than once.

    The chunk's digest has them when the chunk was built from these messages.
    """
    digest = chunk.digest if chunk is not None else None
    if digest is not None and digest.covers(list(by_ordinal.values())):
        return digest.user_texts
    from karni_historian.condense.chunk import meaningful_user_text

    return {o: meaningful_user_text(m) for o, m in by_ordinal.items() if m.role == "user"}


def _assistant_texts(message: Message) -> list[str]:
    """The agent's text parts, line breaks kept so that markdown lines split apart."""
    return [
        stripped
        for p in message.parts
        if isinstance(p, TextPart) and not p.ignored and (stripped := p.text.strip())
    ]


def _is_ack(text: str) -> bool:
    words = _words(text)
    if not words or len(words) > 4:
        return False
    return all(w in _ACKS for w in words) or " ".join(words) in _ACKS


def _opens_as_continuation(text: str) -> bool:
    """Whether ``text`` (past leading acknowledgements) opens with a continuation."""
    words = _words(text)
    while len(words) > 1 and words[0] in _LEADING_ACK:
        words = words[1:]
    # The continuations have at most three words: four tell as much as all of them.
    lowered = " ".join(words[:4])
    return lowered in _CONTINUATION_WORDS or lowered.startswith(_CONTINUATION_PREFIXES)


def _pieces(line: ChunkLine, cuts: Sequence[int], by_ordinal: dict[int, Message]) -> list[Any]:
    """``line`` cut at ``cuts``, the phase starts inside it; each piece keeps its own commits."""
    from dataclasses import replace
    from itertools import pairwise

    bounds = [line.start, *cuts, line.end + 1]
    pieces = []
    for first, after in pairwise(bounds):
        ordinals = tuple(o for o in line.ordinals if first <= o < after)
        texts = " ".join(
            getattr(p, "text", "") or getattr(p, "output", "") or ""
            for o in ordinals
            if o in by_ordinal
            for p in by_ordinal[o].parts
        )
        commits = tuple(h for h in line.commits if h in texts)
        pieces.append(replace(line, start=first, end=after - 1, ordinals=ordinals, commits=commits))
    return pieces


def _phase_lines(
    chunk: Chunk, by_ordinal: dict[int, Message]
) -> tuple[list[ChunkLine], dict[int, str]]:
    """The chunk's lines cut where the work changes phase, and the phases' todo items."""
    from karni_historian.condense.chunk import completed_arcs, fence_arcs
    from karni_historian.condense.work_phases import phase_starts

    inside = [by_ordinal[o] for o in sorted(by_ordinal)]  # the chunk's own (by_ordinal_of)
    starts = phase_starts(inside, fence_arcs(completed_arcs(inside)))
    if not starts:
        return list(chunk.lines), starts
    from bisect import bisect_right

    ordered = sorted(starts)
    lines: list[ChunkLine] = []
    for line in chunk.lines:
        first = bisect_right(ordered, line.start)  # the starts after the line's first ordinal
        after = bisect_right(ordered, line.end, first)  # … through its last
        if first == after:
            lines.append(line)
        else:
            lines += _pieces(line, ordered[first:after], by_ordinal)
    return lines, starts


def episodes(chunk: Chunk, messages: Sequence[Message]) -> list[list[ChunkLine]]:
    """Split the chunk's lines into episodes where the objective or the phase of work changes.

    Args:
        chunk: The chunk to condense.
        messages: The raw messages behind it (any superset).

    Returns:
        Consecutive groups of lines; together they cover exactly the chunk's
        lines (a line is cut in two where a phase of work starts inside it).
    """
    by_ordinal = by_ordinal_of(messages, chunk)
    return _episodes(by_ordinal, _user_texts(by_ordinal), *_phase_lines(chunk, by_ordinal))


def by_ordinal_of(messages: Sequence[Message], chunk: Chunk) -> dict[int, Message]:
    """The chunk's messages by ordinal: nothing outside it is read."""
    start, end = chunk.start, chunk.end
    return {m.ordinal: m for m in messages if start <= m.ordinal <= end}


def _episodes(
    by_ordinal: dict[int, Message],
    texts: dict[int, str],
    lines: list[ChunkLine],
    starts: dict[int, str],
) -> list[list[ChunkLine]]:
    groups: list[list[ChunkLine]] = []
    current: list[ChunkLine] = []
    committed = False
    answered = False  # whether a line of the current episode is not the user's
    for line in lines:
        new_task = current and line.start in starts
        if line.role == "U" and answered:
            text = _line_text(line, by_ordinal, texts)
            ack = _is_ack(text)
            new_task = new_task or not (ack or _opens_as_continuation(text))
            if not ack and (committed or len(current) >= MAX_EPISODE_LINES):
                new_task = True
        if new_task:
            groups.append(current)
            current = []
            committed = answered = False
        current.append(line)
        if line.role != "U":
            answered = True
        if line.commits:
            committed = True
    if current:
        groups.append(current)
    return groups


def _line_text(line: ChunkLine, by_ordinal: dict[int, Message], texts: dict[int, str]) -> str:
    """The meaningful text of a user line's messages, joined; else the line's body."""
    ordinals = line.ordinals
    if len(ordinals) == 1:  # most lines: one message, nothing to join
        ordinal = ordinals[0]
        return (texts.get(ordinal, "") if ordinal in by_ordinal else "") or line.body
    return " ".join(texts.get(o, "") for o in ordinals if o in by_ordinal) or line.body


class _Episode:
    """Signals gathered from one episode's lines and messages."""

    __slots__ = (
        "agent_decisions",
        "assistant",
        "clusters",
        "commands",
        "commit_subjects",
        "commits",
        "configs",
        "continued",
        "decisions",
        "edited",
        "end",
        "failed_run",
        "fallback",
        "fixing",
        "naming",
        "prohibitions",
        "read",
        "replacements",
        "requests",
        "reverted",
        "rules",
        "runs",
        "start",
        "testing",
        "texts",
        "tool_names",
        "topic",
        "user_decisions",
        "user_notes",
    )

    def __init__(
        self,
        lines: list[ChunkLine],
        by_ordinal: dict[int, Message],
        texts: dict[int, str],
        topic: str,
        replacements: set[tuple[str, str, str]],
    ) -> None:
        self.texts = texts  # the meaningful text of the user messages, by ordinal
        self.topic = topic  # the todo item in progress when the episode started
        self.replacements = replacements  # (path, old, new) of the chunk's edits so far
        self.commit_subjects: list[str] = []
        self.start = lines[0].start
        self.end = lines[-1].end
        self.requests: list[str] = []
        self.user_notes: list[str] = []  # constraints, decisions and corrections, verbatim
        self.assistant: list[str] = []
        self.decisions: list[str] = []
        self.failed_run = False
        self.user_decisions: list[str] = []  # the decisions project memory may keep
        self.agent_decisions: list[str] = []  # dropped when the user contradicts them
        self.prohibitions: list[str] = []
        self.rules: list[str] = []
        self.configs: list[str] = []
        self.naming: list[str] = []
        self.edited: list[str] = []
        self.read: list[str] = []
        self.commits: list[str] = []
        self.clusters = 0
        self.reverted = False
        self.fixing = False
        self.testing = False
        self.tool_names: list[str] = []
        self.fallback = ""
        self.continued = False  # the episode opens with a bare "continue"
        self.runs: dict[str, str] = {}  # the last result of each kind of check, as said
        self.commands: list[str] = []
        previous_role = None
        for line in lines:
            if line.commits and previous_role != "A":
                self.clusters += 1
            previous_role = line.role
            for h in line.commits:
                if h not in self.commits:
                    self.commits.append(h)
            for ordinal in line.ordinals:
                message = by_ordinal.get(ordinal)
                if message is not None:
                    self._read_message(message)
        for line in lines:  # the first line with a body, if any
            if line.body:
                self.fallback = line.body.removeprefix("TC: ")
                break
        if self.read:
            self.read = [p for p in self.read if p not in self.edited]

    def _add(self, bucket: list[str], sentence: str) -> None:
        if sentence not in bucket:
            bucket.append(sentence)

    def _read_message(self, message: Message) -> None:
        for part in message.parts:
            if isinstance(part, ToolPart):
                self._read_tool(part)
        if message.role == "user":
            text = _user_words(message) if self.texts.get(message.ordinal) else ""
            if not text or _is_ack(text):
                return
            kind = prompt_kind(text)
            if kind == LOCAL:  # a harness command typed alone (/model): no request
                return
            first_request = not self.requests
            if kind == CONTINUATION:
                self.continued = self.continued or first_request
            elif first_request or not _opens_as_continuation(text):  # (not an acknowledgement)
                self._add(self.requests, text)
            for sentence in _sentences(text):
                signal = _any_user_signal(sentence)
                if signal:
                    self._classify(sentence, user=True)
                elif _P.correction.search(sentence) and _classifiable(sentence):
                    self._drop_contradicted(sentence)  # all a correction does without a signal
                if not first_request and (
                    (
                        signal
                        and (
                            _has("prohibit", sentence)
                            or _has("rule", sentence)
                            or _has("soft_rule", sentence)
                            or _has("decision", sentence)
                        )
                    )
                    or _P.correction.search(sentence)
                ):
                    self._add(self.user_notes, sentence)
        elif message.role == "assistant":
            for text in _assistant_texts(message):
                for sentence in units(text):
                    if not is_statement(sentence):  # narration, questions, advice, guesses
                        continue
                    if len(sentence.split()) < 3 or sentence.endswith(":"):
                        continue  # "Done!", "The steps are:": nothing said on its own
                    if sentence not in self.assistant:
                        self.assistant.append(sentence)
                    self._classify(sentence, user=False)

    def _promote_decision(self, sentence: str, *, user: bool) -> None:
        """Keep a decision for project memory unless it is a request or a progress report."""
        if user and not _P.polite.match(sentence):
            self._add(self.user_decisions, sentence)
        elif not user and not _P.progress.match(sentence):
            self._add(self.agent_decisions, sentence)

    def _drop_contradicted(self, correction: str) -> None:
        """Forget the agent's decisions that a user correction speaks about."""
        said = {w for w in _words(correction) if len(w) > 3}
        self.agent_decisions = [d for d in self.agent_decisions if len(said & set(_words(d))) < 1]

    def _classify(self, sentence: str, *, user: bool) -> None:
        if not user:  # the agent's sentences count only as decisions: the cheaper test first
            if _has("decision", sentence) and _classifiable(sentence):
                self._decision(sentence, user=False)
            return
        if not _classifiable(sentence):
            return
        decided = _has("decision", sentence)
        if decided:
            self._decision(sentence, user=True)
        self._classify_user(sentence, decided=decided)

    def _decision(self, sentence: str, *, user: bool) -> None:
        clause = _clause(sentence, "decision")
        self._add(self.decisions, clause)
        self._promote_decision(clause, user=user)

    def _classify_user(self, sentence: str, *, decided: bool) -> None:
        if _P.opinion.match(sentence):
            return  # "I don't think X works" reports a doubt, not a rule
        if not decided and _P.correction.search(sentence):
            self._drop_contradicted(sentence)
        if _has("prohibit", sentence):
            self._add(self.prohibitions, _clause(sentence, "prohibit"))
        elif _has("rule", sentence):
            self._add(self.rules, _clause(sentence, "rule"))
        elif not decided and _has("soft_rule", sentence):
            # "must" alone is a rule unless the sentence reports a decision, which
            # makes it a design choice (ARCHITECTURE): "we decided pricing must stay…".
            self._add(self.rules, _clause(sentence, "soft_rule"))
        if _has("config", sentence) and _P.value.search(sentence):
            self._add(self.configs, sentence)
        if _has("naming", sentence):
            # Only conventions the user states ("test files are named after…", "use
            # snake_case"), never one-off actions such as "rename total() to subtotal()".
            self._add(self.naming, _clause(sentence, "naming"))

    def _read_tool(self, part: ToolPart) -> None:
        name = part.name.lower()
        if name not in self.tool_names:
            self.tool_names.append(name)
        data = part.input if isinstance(part.input, dict) else {}
        path = input_path(data)
        command = command_of(part.name, data)
        if command is not None:
            commit = commit_of(part)
            if commit is not None:
                self._add(self.commits, commit[0])
                self._add(self.commit_subjects, commit[1])
            self._read_command(part, command)
        if path is None:
            return
        if name in _EDIT_TOOLS:
            self._read_edit(path, data)
        elif name in _READ_TOOLS and path not in self.edited and _project_file(path):
            self._add(self.read, path)

    def _read_command(self, part: ToolPart, command: str) -> None:
        """A shell call: a test run (failing, then passing, is a fix), a check, or a revert."""
        if _P.undo_command.search(command):
            self.reverted = True
        if len(self.commands) < 3:
            self.commands.append(command)
        run = read_run(command, part.output, part.is_error)
        if run.kind in ("test", "typecheck", "lint", "build") and run.failed is not None:
            state = "failed" if run.failed else "passed"
            detail = f": {run.summary}" if run.summary else ""
            self.runs[run.kind] = f"`{_short(run.command)}` {state}{detail}"
        if not _has("test", command):
            return
        self.testing = True
        failed = part.is_error or bool(_P.failed_run.search(part.output or ""))
        if failed:
            self.failed_run = True
        elif self.failed_run:
            self.fixing = True

    def _read_edit(self, path: str, data: dict[str, Any]) -> None:
        """An edit: one that puts back what an earlier edit of the file replaced is a revert."""
        self._add(self.edited, path if _project_file(path) else _basename(path))
        old, new = (
            data.get("old_string", data.get("oldString")),
            data.get("new_string", data.get("newString")),
        )
        if isinstance(old, str) and isinstance(new, str):
            if (path, new, old) in self.replacements:
                self.reverted = True
            self.replacements.add((path, old, new))

    @property
    def importance(self) -> int:
        score = 35
        if self.prohibitions or self.rules:
            score += 20
        if self.decisions:
            score += 15
        score += min(self.clusters, 2) * 10
        if self.reverted:
            score += 10
        if self.edited:
            score += 5
            if self.fixing:
                score += 5
        if not self.edited and not self.commits and not self.decisions:
            score -= 10
        return min(max(score, 1), 100)

    @property
    def episode_type(self) -> str:
        kinds = []
        if self.fixing and (self.edited or self.commits):
            kinds.append("debugging")
        elif self.edited:
            kinds.append("implementation")
        if self.testing:
            kinds.append("testing")
        if self.reverted:
            kinds.append("revert")
        if self.commits:
            kinds.append("commit")
        if self.decisions:
            kinds.append("decision")
        if not kinds:
            kinds.append("investigation" if self.read or self.tool_names else "discussion")
        return ",".join(kinds[:3])


def _user_words(message: Message) -> str:
    """A user message's own words, line breaks kept, pasted terminal output left out."""
    texts = [p.text for p in message.parts if isinstance(p, TextPart) and not p.ignored]
    text = prompt_text(texts, lines=True)
    return without_pasted_output(text) or " ".join(text.split())


def _short(command: str) -> str:
    """A command as a compartment quotes it: no ``cd`` before, no pipe after, 40 characters."""
    from karni_historian.condense.file_notes.failures import short_command

    return short_command(command)


def _resolve_continuations(episodes_: list[_Episode]) -> None:
    """An episode opened by a bare "continue" is about the request it continues."""
    last = ""
    for ep in episodes_:
        if ep.continued and not ep.requests and last:
            ep.requests.append(last)
        elif not ep.requests:
            ep.continued = False  # nothing to name: its topic or its work will
        if ep.requests:
            last = ep.requests[0]


def _objective(ep: _Episode) -> str:
    """What the episode was about: its request, else its todo item, commit, words or files.

    A request of fewer than three words ("wtf", "vs code") names nothing a
    title can use: the other sources come first then.
    """
    request = ""
    if ep.requests:
        sentences = [s for s in _sentences(ep.requests[0]) if not _is_ack(s)]
        request = sentences[0] if sentences else ep.requests[0]
    if request and len(request.split()) >= 3:
        text = request
    elif ep.topic:
        text = ep.topic
    elif ep.commit_subjects:
        text = ep.commit_subjects[0]
    elif ep.assistant:
        text = ep.assistant[0]
    elif ep.edited:
        text = f"Edited {', '.join(_basename(p) for p in ep.edited[:3])}"
    elif request:
        text = request
    elif ep.read:
        text = f"Read {', '.join(_basename(p) for p in ep.read[:3])}"
    elif ep.commands:
        text = f"Ran `{_short(ep.commands[0])}`"
    elif ep.fallback:
        text = ep.fallback
    else:
        text = "Tool calls"
    while True:  # until nothing polite opens it: a text that no match or strip changes
        polite = _P.polite.match(text)  # anchored at the start: the one place it can be
        shorter = (text[polite.end() :] if polite else text).strip()
        if shorter == text:
            break
        text = shorter
    return text.rstrip(" ?.!") or text or "Untitled episode"


def _title(objective: str) -> str:
    """The objective in a few words: the head of "objective: details", at most ~8 words."""
    head, colon, _rest = objective.partition(": ")
    if colon and 2 <= len(head.split()) <= 10:
        objective = head
    words = objective.split()
    if len(words) > 10:
        objective = " ".join(words[:8]) + "…"
    objective = _cap(objective, 72)
    return objective[:1].upper() + objective[1:]


def _project_file(path: str) -> bool:
    """A project-relative file path, not a machine path or a glob pattern."""
    return (
        not path.startswith(("/", "~")) and "*" not in path and "?" not in path and "[" not in path
    )


def _basename(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2] or path


def _files_sentence(ep: _Episode, limit: int, *, reads: bool) -> str:
    parts = []
    if ep.edited:
        shown = ep.edited[:limit]
        more = f" and {len(ep.edited) - limit} more" if len(ep.edited) > limit else ""
        parts.append(f"Edited {', '.join(shown)}{more}.")
    if reads and ep.read:
        shown = ep.read[:limit]
        more = f" and {len(ep.read) - limit} more" if len(ep.read) > limit else ""
        parts.append(f"Read {', '.join(shown)}{more}.")
    return " ".join(parts)


def _commits_sentence(ep: _Episode) -> str:
    if not ep.commits:
        return ""
    return f"Commits: {', '.join(ep.commits)}."


def _key_sentences(ep: _Episode, limit: int) -> list[str]:
    """At most ``limit`` of the agent's sentences, decisions, fixes and reverts first, in order."""
    if len(ep.assistant) <= limit:
        return list(ep.assistant)  # every one of them, whichever is marked
    chosen: list[str] = []
    for s in ep.assistant:
        if len(chosen) < limit and (_has("decision", s) or _has("fix", s) or _has("revert", s)):
            chosen.append(s)
    for s in ep.assistant:
        if len(chosen) >= limit:
            break
        if s not in chosen:
            chosen.append(s)
    order = {s: i for i, s in enumerate(ep.assistant)}
    return sorted(chosen, key=lambda s: order.get(s, 0))


def _fit(parts: list[str], limit: int) -> str:
    """Whole sentences within ``limit``: the first and the commits always, then the rest in order.

    A tier is shortened by leaving out its less important sentences, never by
    cutting one in the middle (only a first sentence longer than the limit is).
    """
    parts = _once([q for p in parts if p and (q := p.strip())])
    if not parts:
        return ""
    # Each sentence costs its length and a separator; a first one that is also
    # a commits sentence is counted twice, as it comes twice in the order below.
    total = sum(map(len, parts)) + 2 * len(parts)
    if parts[0].startswith("Commits: "):
        total += len(parts[0]) + 2
    if total <= limit:  # everything fits: joined, it is shorter than the total (no cap)
        return _join_stripped(parts)
    commits = [i for i, p in enumerate(parts) if p.startswith("Commits: ")]
    order = [0, *commits, *(i for i in range(1, len(parts)) if i not in commits)]
    chosen: set[int] = set()
    used = 0
    for i in order:
        cost = len(parts[i]) + 2
        if not chosen or used + cost <= limit:
            chosen.add(i)
            used += cost
    return _cap(_join_stripped([p for i, p in enumerate(parts) if i in chosen]), limit)


def _once(sentences: list[str]) -> list[str]:
    """``sentences`` without those that say what an earlier one said (same letters and digits)."""
    seen: set[str] = set()
    kept = []
    for sentence in sentences:
        said = "".join(char for char in sentence.lower() if char.isalnum())
        if said not in seen:
            seen.add(said)
            kept.append(sentence)
    return kept


def _join_stripped(sentences: list[str]) -> str:
    """Non-empty stripped sentences joined, each ended by a full stop unless it has an end."""
    return " ".join([s if s[-1] in '.!?…"' else s + "." for s in sentences])


def _tiers(ep: _Episode, importance: int, objective: str) -> tuple[str, str, str, str]:
    objective = objective[:1].upper() + objective[1:]
    request = _cap(ep.requests[0], 400) if ep.requests else ""
    substantive = [s for s in ep.assistant if len(_words(s)) >= 4] or ep.assistant
    last = substantive[-1] if substantive else ""
    for sentence in reversed(substantive):  # the last that reports a result, if one does
        if _has("result", sentence):
            last = sentence
            break
    outcome = _cap(last, 200) if last else ""

    commits = _commits_sentence(ep)
    checks = f"Checks: {'; '.join(ep.runs.values())}." if ep.runs else ""
    stated = ep.prohibitions + ep.rules
    asked = "Continuing" if ep.continued else "Asked"
    p2_parts = [f"{asked}: {_cap(objective, 160)}" if ep.requests else _cap(objective, 160)]
    if stated:  # (most episodes state nothing and decide nothing: no comprehension to run)
        p2_parts += [f'U: "{_cap(s, 160)}"' for s in stated[:2]]
    if ep.decisions:
        p2_parts += [_cap(s, 160) for s in ep.decisions[:2] if s not in stated]
    if outcome and outcome not in ep.decisions:
        p2_parts.append(outcome)
    files = _files_sentence(ep, 5, reads=False)
    p2_parts += [files, checks, commits]
    p2 = _fit(p2_parts, 700)

    p1_parts = [f'{asked}: "{request}"' if request else _cap(objective, 200)]
    if ep.user_notes:
        p1_parts += [f'U: "{_cap(s, 240)}"' for s in ep.user_notes[:6]]
    if ep.assistant:
        p1_parts += [_cap(s, 240) for s in _key_sentences(ep, 8)]
    if ep.read or len(ep.edited) > 5:  # else it names the same files
        files = _files_sentence(ep, 10, reads=True)
    p1_parts += [files, checks, commits]
    p1 = _fit(p1_parts, 1600)

    p3_parts = [_cap(objective, 120)]
    tail = commits or checks or (_cap(outcome, 100) if outcome else "")
    if tail:
        p3_parts.append(tail)
    p3 = _fit(p3_parts, 260)

    anchors = list(ep.commits) + [_basename(p) for p in ep.edited[:3]]
    if anchors:
        p4 = _cap(", ".join(dict.fromkeys(anchors)), 120)
    elif importance >= 60:
        p4 = _cap(objective, 60)
    else:
        p4 = ""
    return p1, p2, p3, p4


def _whole_sentence(sentence: str) -> bool:
    """Whether a fact candidate is a whole sentence: no fragment, no unbalanced quote, no guess."""
    if len(sentence.split()) < 4 or not (sentence[:1].isupper() or sentence[:1] in "`\"'"):
        return False
    if sentence.count("`") % 2 or sentence.count("(") != sentence.count(")"):
        return False
    return is_statement(sentence) and not sentence.rstrip().endswith((":", ","))


def _facts(episodes_: list[_Episode]) -> list[Fact]:
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()

    def add(category: str, sentences: list[str]) -> None:
        for s in sentences:
            s = _P.lead.sub("", s)
            s = s[:1].upper() + s[1:]
            if not _whole_sentence(s):
                continue
            key = (category, s.lower())
            if key not in seen:
                seen.add(key)
                facts.append(Fact(category, s))

    for ep in episodes_:
        add("CONSTRAINTS", ep.prohibitions)
        add("PROJECT_RULES", ep.rules)
        decisions = ep.user_decisions + ep.agent_decisions
        add("ARCHITECTURE", [s for s in decisions if s not in ep.prohibitions + ep.rules])
        add("CONFIG_VALUES", ep.configs)
        add("NAMING", ep.naming)
    return facts


def summarize(chunk: Chunk, messages: Sequence[Message]) -> str:
    """Condense a chunk into historian XML without a model.

    Args:
        chunk: The chunk built by :func:`karni_historian.condense.chunk.build_chunk`.
        messages: The raw messages behind the chunk (any superset of its range).

    Returns:
        The ``<output>`` document (``docs/historian/validation.md``), one compartment per
        episode, tiling ``chunk.start``–``chunk.end``, and the promoted facts.
        An empty chunk gives an output with no compartments.
    """
    from karni_historian.condense.compartment_xml import emit

    compartments, facts = condense(chunk, messages)
    return emit(compartments, facts, messages_processed=_processed(chunk, compartments))


def summarize_parsed(chunk: Chunk, messages: Sequence[Message]) -> ParsedOutput:
    """What :func:`~karni_historian.condense.compartment_xml.parse` reads from :func:`summarize`.

    The same result, without writing the XML and parsing it back: what a run
    of the built-in historian validates.
    """
    from karni_historian.condense.compartment_xml import read_back

    compartments, facts = condense(chunk, messages)
    return read_back(compartments, facts, messages_processed=_processed(chunk, compartments))


def _processed(chunk: Chunk, compartments: list[Compartment]) -> tuple[int, int] | None:
    return (chunk.start, chunk.end) if compartments else None


def condense(chunk: Chunk, messages: Sequence[Message]) -> tuple[list[Compartment], list[Fact]]:
    """The compartments (one per episode, tiling the chunk) and the facts of a chunk."""
    by_ordinal = by_ordinal_of(messages, chunk)
    texts = _user_texts(by_ordinal, chunk)
    lines, starts = _phase_lines(chunk, by_ordinal)
    groups = _episodes(by_ordinal, texts, lines, starts)
    edits: set[tuple[str, str, str]] = set()
    gathered = [
        _Episode(group, by_ordinal, texts, starts.get(group[0].start, ""), edits)
        for group in groups
    ]
    _resolve_continuations(gathered)
    compartments = []
    for index, ep in enumerate(gathered):
        importance = ep.importance
        objective = _objective(ep)
        p1, p2, p3, p4 = _tiers(ep, importance, objective)
        compartments.append(
            Compartment(
                start=chunk.start if index == 0 else ep.start,
                end=ep.end,
                title=_title(objective),
                p1=p1,
                p2=p2,
                p3=p3,
                p4=p4,
                importance=importance,
                episode_type=ep.episode_type,
                content=p1,  # as parsing fills it: read back without a copy
            )
        )
    return compartments, _facts(gathered)
