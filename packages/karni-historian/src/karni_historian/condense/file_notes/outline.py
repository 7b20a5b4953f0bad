"""A session's outline: its requests, the files each edited, and which of them are worth noting.

``ingest`` notes a session in two readings, so that its memory stays the same
however long the session is, and the costly extraction is spent only where a
brief will show it (``docs/historian/file-notes.md``):

1. The *outline* reads every stored row, decoding only the user's prompts
   and the agent's messages that call a tool (any other row is skipped
   undecoded), and builds only the parts a request's edits need (and the
   commits its git commands printed). Each request is handed out as soon as
   the next one starts; its lines of what shaped each file, the digests of
   its landed edits and what ``blame`` reads (:mod:`.attribution`) are staged
   (:meth:`karni_historian.store.Store.stage_file_notes`), and then it is
   forgotten. The
   outline keeps only each request's first message and the start of its
   second attempt, the files the session edited, and each file's
   :data:`~karni_historian.condense.file_notes.extract.NOTED_REQUESTS`
   newest requests.
2. The requests chosen so are then read again, whole, a run of consecutive
   ones at a time (:func:`chosen_requests`), with the first attempt of the
   request after each (what the user said next), and their notes are
   worked out.

The outline reads the rows as the store's decoder does (tool inputs shown
project-relative, a reference to a call read as the call), keeping only what
a request's edits need.
"""

from __future__ import annotations

from array import array
from collections import deque

from karni_historian.condense.file_notes import extract
from karni_historian.condense.file_notes.session import Request, RequestReader, iter_requests
from karni_historian.condense.project_view import input_view
from karni_historian.edits import EDIT_TOOLS
from karni_historian.model import TextPart, ToolPart
from karni_historian.store.codec import json_reader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from karni_historian.model import Message
    from karni_historian.store import Store

__all__ = ["Outline", "chosen_requests", "outline_requests"]

_BATCH = 500
"""Messages fetched per query when the chosen requests are read again."""


class Outline:
    """What the first reading keeps of a session's requests (a few numbers each).

    Args:
        start: The first message of the reading.
    """

    def __init__(self, start: int) -> None:
        self.start = start
        self.starts = array("q")
        """Each request's first message (the reading's first for the first request)."""
        self.seconds = array("q")
        """Each request's second attempt's prompt, 0 when it had one attempt."""
        self.paths: set[str] = set()
        """Every file the requests' edits named."""
        self._newest: dict[str, deque[int]] = {}
        self._last: list[int] = []

    def add(self, request: Request, paths: list[str]) -> None:
        """Remember a finished request (the next in order), which edited ``paths``."""
        index = len(self.starts)
        self.starts.append(request.ordinal if index else self.start)
        attempts = request.attempts
        self.seconds.append(attempts[1].ordinal if len(attempts) > 1 else 0)
        for path in paths:
            self.paths.add(path)
            newest = self._newest.get(path)
            if newest is None:
                newest = self._newest[path] = deque(maxlen=extract.NOTED_REQUESTS)
            newest.append(index)
        if request.ordinal >= self.start:
            self._last = [*self._last[-1:], request.ordinal]

    def resume_point(self) -> int:
        """Where the next reading starts: the second to last request (the last two may change)."""
        return self._last[0] if len(self._last) == 2 else self.start

    def chosen(self) -> set[tuple[int, str]]:
        """``(request index, path)`` of each file's newest requests, whose notes are worked out."""
        return {(index, path) for path, newest in self._newest.items() for index in newest}

    def runs(self, chosen: set[tuple[int, str]]) -> list[tuple[int, int]]:
        """The chosen requests as runs of consecutive indexes, ``(first, last)``, in order."""
        found: list[tuple[int, int]] = []
        for index in sorted({index for index, _path in chosen}):
            if found and found[-1][1] == index - 1:
                found[-1] = (found[-1][0], index)
            else:
                found.append((index, index))
        return found

    def span(self, first: int, last: int) -> tuple[int, int | None]:
        """The messages of requests ``first`` to ``last`` and of the next one's first attempt.

        ``(from, to)``, ``to`` None for the session's end.
        """
        following = last + 1
        if following >= len(self.starts):
            return self.starts[first], None
        if self.seconds[following]:
            return self.starts[first], self.seconds[following] - 1
        if following + 1 < len(self.starts):
            return self.starts[first], self.starts[following + 1] - 1
        return self.starts[first], None


def outline_requests(store: Store, session_id: str, start: int) -> Iterator[Request]:
    """The session's requests from message ``start`` on, read lightly, one at a time.

    What they edited is complete (files, texts, errors, times, the subagents'
    tasks); what the agent said is kept only for a request with no text of its
    own, and shell commands only for the files they write and the commits
    they made. A user message without
    a text part, and an agent's message without a tool call (unless the
    request has no text yet), are skipped without decoding.
    """
    reader = RequestReader(light=True)
    loads = json_reader()
    view = input_view(store.root, {})
    finished = reader.finished
    for ordinal, role, parts_json, timestamp in store.stored_messages(session_id, start):
        if role == "user":
            if '"text"' in parts_json:  # else only tool results: no prompt
                texts = [
                    item.get("text", "")
                    for item in loads(parts_json)
                    if item.get("type") != "tool" and not item.get("ignored")
                ]
                reader.prompt(ordinal, timestamp, texts)
        elif role == "assistant":
            words = reader.wants_words()
            if words or '"tool"' in parts_json:  # else only the agent's words
                items = loads(parts_json)
                if '"copy_of"' in parts_json and any(
                    "copy_of" in item for item in items if item.get("type") == "tool"
                ):  # a reference to a call, read as the store reads it
                    for message in store.message_batch(session_id, ordinal, 1, tool_input=view):
                        reader.assistant(message)
                else:
                    reader.agent(ordinal, _assistant_parts(items, words, view), timestamp)
        if finished:
            yield from finished
            finished.clear()
    last = reader.close()
    if last is not None:
        yield last


def _assistant_parts(
    items: list[Any], words: bool, view: Callable[[Any], Any]
) -> tuple[TextPart | ToolPart, ...]:
    """An agent message's tool parts (and text parts when ``words``), as the store decodes them."""
    parts: list[TextPart | ToolPart] = []
    for item in items:
        get = item.get
        if get("type") == "tool":
            name = get("name", "")
            data = get("input")
            if type(name) is str and name.lower() in EDIT_TOOLS:
                data = view(data)  # only an edit reads the paths the view changes
            tool = ToolPart(
                name,
                data,
                get("output"),
                get("call_id", ""),
                bool(get("is_error")),
                get("metadata"),
            )
            parts.append(tool)
        elif words:
            parts.append(TextPart(get("text", ""), bool(get("ignored"))))
    return tuple(parts)


def chosen_requests(
    store: Store, session_id: str, outline: Outline, chosen: set[tuple[int, str]]
) -> Iterator[tuple[int, Request, Request | None]]:
    """``(index, request, next request)`` of each chosen request, read whole, in order.

    Only the first attempt of the next request is read (None after the
    session's last request). A run of consecutive chosen requests is read in
    one pass, one request held at a time.
    """
    view = input_view(store.root, {})
    for first, last in outline.runs(chosen):
        low, high = outline.span(first, last)
        held: Request | None = None
        index = first - 1
        for index, request in enumerate(
            iter_requests(_messages_between(store, session_id, low, high, view)), first
        ):
            if held is not None:
                yield index - 1, held, request
            held = request if index <= last else None
        if held is not None:
            yield index, held, None


def _messages_between(
    store: Store, session_id: str, low: int, high: int | None, view: Callable[[Any], Any]
) -> Iterator[Message]:
    """The session's messages ``low``-``high`` (to its end when None), a batch at a time."""
    while high is None or low <= high:
        limit = _BATCH if high is None else min(_BATCH, high - low + 1)
        batch = store.message_batch(session_id, low, limit, tool_input=view)
        yield from batch
        if len(batch) < limit:
            return
        low = batch[-1].ordinal + 1
