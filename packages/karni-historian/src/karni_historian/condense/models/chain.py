"""The model-backed historian: a chain of models turning a chunk into valid XML.

:class:`ModelHistorian` is the callable the runner's ``historian=`` hook takes.
For each chunk it walks its chain (the model, then ``fallback_models``, in
order and nothing else): a transient failure (rate limit, overload, 5xx,
timeout, dropped connection) is retried on the same model with backoff and
jitter, at most :data:`ATTEMPTS` calls; a permanent one (bad request,
authentication, unknown model, a missing SDK) moves to the next model; a
reply that does not parse or validate gets one repair request. With
``two_pass`` a valid draft then goes through the editor once; if that fails,
the draft is kept and the failure noted. When every model failed, the run
fails with :class:`~karni_historian.errors.ChainExhaustedError`: never a
silent switch. Every failed call leaves a redacted dump (``dumps.py``).
"""

from __future__ import annotations

import random
import time

from karni_historian.budget import estimate_tokens
from karni_historian.condense.boundaries import completed_arcs, fence_arcs
from karni_historian.condense.compartment_xml import parse, validate
from karni_historian.condense.extractive import summarize
from karni_historian.condense.models.backends import complete
from karni_historian.condense.models.prompt import Prompt, editor_prompt, fit_prompt, repair_prompt
from karni_historian.condense.models.redaction import env_file_values
from karni_historian.errors import ChainExhaustedError, HistorianOutputError, ModelCallError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from karni_historian.condense.chunk import Chunk
    from karni_historian.condense.models.calling import Reply
    from karni_historian.condense.models.dumps import DumpFolder
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.condense.models.prompt import Prompt, PromptContext
    from karni_historian.condense.models.redaction import Redactor
    from karni_historian.condense.models.settings import ResolvedChain
    from karni_historian.model import Message

__all__ = ["ATTEMPTS", "BACKOFF_SECONDS", "ModelHistorian"]

ATTEMPTS = 3
"""Calls to one model for one prompt: the first and two retries of transient failures."""

BACKOFF_SECONDS = ((2.0, 3.0), (6.0, 8.0))
"""The pause before each retry, drawn uniformly from these ranges."""


class _InvalidReply(Exception):
    """A reply that does not parse or validate (kept for the repair request)."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


class ModelHistorian:
    """The historian hook for one session: its chain, prompt context and dumps.

    Args:
        chain: The resolved chain (not disabled, not only ``local/extractive``).
        context: Returns the prompt's references and memory, read afresh for
            every chunk (compartments published in the same run count).
        dumps: Where failed calls are dumped.
        redact: Applied to every prompt before it is sent and to every error.
        call: Sends one prompt to one model (the real backends by default).
        sleep: Waits between retries (for tests).
        jitter: Draws the pause from a range (for tests).
    """

    def __init__(
        self,
        chain: ResolvedChain,
        context: Callable[[], PromptContext],
        dumps: DumpFolder,
        redact: Redactor,
        *,
        call: Callable[[ModelEntry, Prompt], Reply] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        """Create the hook; no model is called until a chunk arrives."""
        self.chain = chain
        self.name = chain.entries[0].model_id
        self.notes: list[str] = []
        self.last_model: str | None = None
        self.on_call: Callable[[ModelEntry, int, float, str | None], None] | None = None
        """Told of every model call: the entry, the attempt, seconds taken, the error or None."""
        self._context = context
        self._dumps = dumps
        self._redact = redact
        self._call = call or complete
        self._sleep = sleep
        self._jitter = jitter

    def __call__(self, chunk: Chunk, messages: Sequence[Message]) -> str:
        """Historian XML for ``chunk``, valid against it.

        Raises:
            ChainExhaustedError: Every model of the chain failed.
        """
        redact = self._redact.with_values(env_file_values(messages))
        arcs = fence_arcs(completed_arcs(messages))
        last_error = "the chain has no model"
        for entry in self.chain.entries:
            try:
                xml = self._draft(entry, chunk, messages, arcs, redact)
            except ModelCallError as error:
                last_error = str(error)
                continue
            self.last_model = entry.model_id
            if self.chain.two_pass and entry.model_id != "local/extractive":
                xml = self._edit(entry, chunk, xml, arcs, redact)
            return xml
        dump = self._dumps.newest()
        where = f"; details in {dump}" if dump else ""
        raise ChainExhaustedError(
            f"the historian chain {self.chain.name} is exhausted: {last_error}{where}", dump=dump
        )

    def _draft(
        self,
        entry: ModelEntry,
        chunk: Chunk,
        messages: Sequence[Message],
        arcs: Sequence[tuple[int, int]],
        redact: Redactor,
    ) -> str:
        """A valid draft from ``entry``: the first call and, if needed, one repair."""
        if entry.model_id == "local/extractive":
            return summarize(chunk, messages)
        fitted = fit_prompt(
            chunk.text,
            chunk.start,
            chunk.end,
            self._context(),
            window=entry.context_window,
            reply_tokens=entry.max_tokens,
        )
        if fitted is None:
            raise self._fail(entry, chunk, None, _too_large(entry, chunk))
        prompt = _redacted(fitted, redact)
        try:
            return self._valid_reply(entry, chunk, prompt, arcs, redact)
        except _InvalidReply as invalid:
            repair = _redacted(repair_prompt(prompt, str(invalid), invalid.text), redact)
            try:
                return self._valid_reply(entry, chunk, repair, arcs, redact)
            except _InvalidReply as still:
                raise ModelCallError(
                    redact(f"{entry.model_id}: the repaired reply is still invalid: {still}"),
                    transient=False,
                ) from None

    def _valid_reply(
        self,
        entry: ModelEntry,
        chunk: Chunk,
        prompt: Prompt,
        arcs: Sequence[tuple[int, int]],
        redact: Redactor,
    ) -> str:
        """One prompt's reply, retried while transient, checked against the chunk."""
        reply = self._with_retries(entry, chunk, prompt, redact)
        problem = _reply_problem(entry, reply)
        if problem is None:
            try:
                validate(parse(reply.text), chunk, arcs=arcs, force_keep=True)
            except HistorianOutputError as error:
                problem = str(error)
        if problem is not None:
            self._dump(entry, chunk, prompt, redact(problem), reply.raw)
            raise _InvalidReply(problem, reply.text)
        return reply.text

    def _with_retries(
        self, entry: ModelEntry, chunk: Chunk, prompt: Prompt, redact: Redactor
    ) -> Reply:
        for attempt in range(ATTEMPTS):
            started = time.monotonic()
            try:
                reply = self._call(entry, prompt)
            except ModelCallError as error:
                message = redact(str(error))
                self._told(entry, attempt + 1, started, message)
                self._dump(entry, chunk, prompt, message, error.raw, attempt=attempt + 1)
                if not error.transient or attempt + 1 == ATTEMPTS:
                    raise ModelCallError(
                        message, transient=error.transient, status=error.status
                    ) from None
                low, high = BACKOFF_SECONDS[min(attempt, len(BACKOFF_SECONDS) - 1)]
                self._sleep(self._jitter(low, high))
            else:
                self._told(entry, attempt + 1, started, None)
                return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def _told(self, entry: ModelEntry, attempt: int, started: float, error: str | None) -> None:
        if self.on_call is not None:
            self.on_call(entry, attempt, time.monotonic() - started, error)

    def _edit(
        self,
        entry: ModelEntry,
        chunk: Chunk,
        draft: str,
        arcs: Sequence[tuple[int, int]],
        redact: Redactor,
    ) -> str:
        """The editor pass of ``two_pass``; the draft itself when the editor fails."""
        try:
            prompt = _redacted(editor_prompt(draft), redact)
            return self._valid_reply(entry, chunk, prompt, arcs, redact)
        except (ModelCallError, _InvalidReply) as error:
            note = f"the editor pass of {entry.model_id} failed ({error}); kept the first draft"
            self.notes.append(redact(note))
            return draft

    def _fail(
        self, entry: ModelEntry, chunk: Chunk, prompt: Prompt | None, message: str
    ) -> ModelCallError:
        self._dump(entry, chunk, prompt, message, "")
        return ModelCallError(message, transient=False)

    def _dump(
        self,
        entry: ModelEntry,
        chunk: Chunk,
        prompt: Prompt | None,
        error: str,
        raw: str,
        *,
        attempt: int = 1,
    ) -> None:
        self._dumps.write(_dump_record(entry, chunk, prompt, error, raw, attempt))


def _redacted(prompt: Prompt, redact: Redactor) -> Prompt:
    """The prompt with secrets removed from its user part (the system part is ours)."""
    return Prompt(prompt.system, redact(prompt.user))


def _reply_problem(entry: ModelEntry, reply: Reply) -> str | None:
    if not reply.text.strip():
        return "Historian returned no assistant output."
    if reply.truncated:
        return (
            f"the reply stopped at max_tokens ({entry.max_tokens}) before the XML was complete; "
            f"raise `max_tokens` for {entry.model_id}"
        )
    return None


def _too_large(entry: ModelEntry, chunk: Chunk) -> str:
    return (
        f"{entry.model_id}: messages {chunk.start}-{chunk.end} do not fit its context window "
        f"({entry.context_window} tokens with {entry.max_tokens} for the reply); "
        f"raise `context_window` or lower `max_tokens`"
    )


def _dump_record(
    entry: ModelEntry,
    chunk: Chunk,
    prompt: Prompt | None,
    error: str,
    raw: str,
    attempt: int,
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "endpoint": entry.endpoint,
        "max_tokens": entry.max_tokens,
        "temperature": entry.temperature,
        "timeout": entry.timeout,
        "context_window": entry.context_window,
        "reasoning": entry.reasoning,
        "chunk": f"{chunk.start}-{chunk.end}",
    }
    if prompt is not None:
        request["prompt_chars"] = len(prompt.text)
        request["prompt_tokens"] = estimate_tokens(prompt.text)
        request["prompt_opening"] = prompt.user[:2000]
    return {
        "model": entry.model_id,
        "attempt": attempt,
        "error": error,
        "request": request,
        "response": raw,
    }
