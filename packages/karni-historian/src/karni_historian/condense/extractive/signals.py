"""What one episode says, gathered from its lines and messages: the built-in historian's signals.

Requests, the user's constraints, decisions and corrections (verbatim), the
agent's key sentences, files read and edited, commands and checks run,
commits, reverts; from them the episode's importance and type
(``docs/historian/validation.md``).
"""

from __future__ import annotations

from karni_historian.condense.extractive.sentences import (
    COMPILED,
    any_user_signal,
    classifiable,
    clause,
    has,
    is_ack,
    opens_as_continuation,
    split_sentences,
    words_of,
)
from karni_historian.condense.file_notes.commands import command_of, read_run
from karni_historian.condense.file_notes.prompts import (
    CONTINUATION,
    LOCAL,
    prompt_kind,
    without_pasted_output,
)
from karni_historian.condense.file_notes.prose import is_statement, units
from karni_historian.condense.work_phases import commit_of, input_path
from karni_historian.model import Message, TextPart, ToolPart
from karni_historian.prompts import prompt_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.condense.chunk import ChunkLine

__all__ = ["Episode", "assistant_texts", "basename", "project_file", "quoted_command"]

_READ_TOOLS = frozenset({"read", "view", "notebookread", "read_file", "cat"})
_EDIT_TOOLS = frozenset(
    {"edit", "write", "multiedit", "notebookedit", "str_replace_editor", "create", "patch"}
)


class Episode:
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
            if text and not is_ack(text):
                self._read_user(text)
        elif message.role == "assistant":
            self._read_assistant(message)

    def _read_user(self, text: str) -> None:
        """A user turn's words: a request (or a continuation), then what each sentence says."""
        kind = prompt_kind(text)
        if kind == LOCAL:  # a harness command typed alone (/model): no request
            return
        first_request = not self.requests
        if kind == CONTINUATION:
            self.continued = self.continued or first_request
        elif first_request or not opens_as_continuation(text):  # (not an acknowledgement)
            self._add(self.requests, text)
        for sentence in split_sentences(text):
            signal = any_user_signal(sentence)
            if signal:
                self._classify(sentence, user=True)
            elif COMPILED.correction.search(sentence) and classifiable(sentence):
                self._drop_contradicted(sentence)  # all a correction does without a signal
            if not first_request and _worth_noting(sentence, signal=signal):
                self._add(self.user_notes, sentence)

    def _read_assistant(self, message: Message) -> None:
        """The agent's statements: kept as its key sentences, and read for decisions."""
        for text in assistant_texts(message):
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
        if user and not COMPILED.polite.match(sentence):
            self._add(self.user_decisions, sentence)
        elif not user and not COMPILED.progress.match(sentence):
            self._add(self.agent_decisions, sentence)

    def _drop_contradicted(self, correction: str) -> None:
        """Forget the agent's decisions that a user correction speaks about."""
        said = {w for w in words_of(correction) if len(w) > 3}
        self.agent_decisions = [d for d in self.agent_decisions if len(said & set(words_of(d))) < 1]

    def _classify(self, sentence: str, *, user: bool) -> None:
        if not user:  # the agent's sentences count only as decisions: the cheaper test first
            if has("decision", sentence) and classifiable(sentence):
                self._decision(sentence, user=False)
            return
        if not classifiable(sentence):
            return
        decided = has("decision", sentence)
        if decided:
            self._decision(sentence, user=True)
        self._classify_user(sentence, decided=decided)

    def _decision(self, sentence: str, *, user: bool) -> None:
        said = clause(sentence, "decision")
        self._add(self.decisions, said)
        self._promote_decision(said, user=user)

    def _classify_user(self, sentence: str, *, decided: bool) -> None:
        if COMPILED.opinion.match(sentence):
            return  # "I don't think X works" reports a doubt, not a rule
        if not decided and COMPILED.correction.search(sentence):
            self._drop_contradicted(sentence)
        if has("prohibit", sentence):
            self._add(self.prohibitions, clause(sentence, "prohibit"))
        elif has("rule", sentence):
            self._add(self.rules, clause(sentence, "rule"))
        elif not decided and has("soft_rule", sentence):
            # "must" alone is a rule unless the sentence reports a decision, which
            # makes it a design choice (ARCHITECTURE): "we decided pricing must stay…".
            self._add(self.rules, clause(sentence, "soft_rule"))
        if has("config", sentence) and COMPILED.value.search(sentence):
            self._add(self.configs, sentence)
        if has("naming", sentence):
            # Only conventions the user states ("test files are named after…", "use
            # snake_case"), never one-off actions such as "rename total() to subtotal()".
            self._add(self.naming, clause(sentence, "naming"))

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
        elif name in _READ_TOOLS and path not in self.edited and project_file(path):
            self._add(self.read, path)

    def _read_command(self, part: ToolPart, command: str) -> None:
        """A shell call: a test run (failing, then passing, is a fix), a check, or a revert."""
        if COMPILED.undo_command.search(command):
            self.reverted = True
        if len(self.commands) < 3:
            self.commands.append(command)
        run = read_run(command, part.output, part.is_error)
        if run.kind in ("test", "typecheck", "lint", "build") and run.failed is not None:
            state = "failed" if run.failed else "passed"
            detail = f": {run.summary}" if run.summary else ""
            self.runs[run.kind] = f"`{quoted_command(run.command)}` {state}{detail}"
        if not has("test", command):
            return
        self.testing = True
        failed = part.is_error or bool(COMPILED.failed_run.search(part.output or ""))
        if failed:
            self.failed_run = True
        elif self.failed_run:
            self.fixing = True

    def _read_edit(self, path: str, data: dict[str, Any]) -> None:
        """An edit: one that puts back what an earlier edit of the file replaced is a revert."""
        self._add(self.edited, path if project_file(path) else basename(path))
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
        """1-100: 35, raised by constraints, decisions, commits, reverts, edits and fixes."""
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
        """At most three kinds, comma-separated (``debugging``, ``implementation``, ``testing``)."""
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


def _worth_noting(sentence: str, *, signal: bool) -> bool:
    """Whether a user sentence after the request is kept verbatim.

    A constraint, a rule, a decision or a correction is.
    """
    if signal and (
        has("prohibit", sentence)
        or has("rule", sentence)
        or has("soft_rule", sentence)
        or has("decision", sentence)
    ):
        return True
    return COMPILED.correction.search(sentence) is not None


def _user_words(message: Message) -> str:
    """A user message's own words, line breaks kept, pasted terminal output left out."""
    texts = [p.text for p in message.parts if isinstance(p, TextPart) and not p.ignored]
    text = prompt_text(texts, lines=True)
    return without_pasted_output(text) or " ".join(text.split())


def assistant_texts(message: Message) -> list[str]:
    """The agent's text parts, line breaks kept so that markdown lines split apart."""
    return [
        stripped
        for p in message.parts
        if isinstance(p, TextPart) and not p.ignored and (stripped := p.text.strip())
    ]


def project_file(path: str) -> bool:
    """A project-relative file path, not a machine path or a glob pattern."""
    return (
        not path.startswith(("/", "~")) and "*" not in path and "?" not in path and "[" not in path
    )


def quoted_command(command: str) -> str:
    """A command as a compartment quotes it: no ``cd`` before, no pipe after, 40 characters."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.failures import short_command

    return short_command(command)


def basename(path: str) -> str:
    """The last name of ``path`` (a folder's too)."""
    return path.rstrip("/").rpartition("/")[2] or path
