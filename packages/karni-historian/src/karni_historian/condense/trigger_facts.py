"""The true-raw tokens of a session's messages, measured from the stored rows.

``run``'s triggers (``docs/historian/triggers.md``) count the true-raw tokens
(text, tool inputs as JSON, tool outputs) of every message after the last
compartment. Building every message of the session only to measure it took
about a sixth of a ``run``; :func:`raw_token_counts` reads each row's JSON and
measures its parts where they lie instead.

The counts are those of :func:`karni_historian.condense.message_text.raw_tokens` on
the messages :func:`karni_historian.condense.window.stream_messages` gives:
tool inputs shown project-relative, and a tool result stored as a reference
to its call (``docs/historian/store.md``) measured as the call's part. The
rows are read as the store's decoder reads them: by orjson when it gives what
the JSON module gives for every measured value, and a reference is resolved
as a batch's reader resolves it (the calls of the batch's earlier messages
first, else the call's own row).
"""

from __future__ import annotations

import json

from karni_historian.budget import estimate_tokens, tokens_for_length
from karni_historian.condense.message_text import json_text
from karni_historian.condense.project_view import input_view
from karni_historian.condense.window import BATCH_MESSAGES
from karni_historian.fastjson import orjson_loads
from karni_historian.model import ToolPart
from karni_historian.store.codec import _holds_float, parts_decoder
from karni_historian.store.messages import _CALLS_REMEMBERED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from karni_historian.store import Store

__all__ = ["raw_token_counts"]


def raw_token_counts(
    store: Store, session_id: str, start: int, batch: int | None = None
) -> Iterator[tuple[int, int]]:
    """``(ordinal, true-raw tokens)`` of the session's messages from ``start`` on, in order.

    Args:
        store: The project's store.
        session_id: The session.
        start: The first ordinal measured.
        batch: The batch size of the reader whose messages are measured
            (:data:`karni_historian.condense.window.BATCH_MESSAGES` when None);
            a reference is resolved within its batch first, as that reader does.
    """
    measure = _RowMeasure(store, session_id)
    for ordinal, role, parts_json in _measured_rows(measure, start, batch):
        yield ordinal, measure.row(ordinal, role, parts_json)


def _measured_rows(
    measure: _RowMeasure, start: int, batch: int | None
) -> Iterator[tuple[int, str, Any]]:
    """The stored rows from ``start`` on, each batch's memory of calls started afresh."""
    batch = batch or BATCH_MESSAGES
    rows = measure.store.stored_rows(measure.session_id, start)
    for index, row in enumerate(rows):
        if index % batch == 0:
            measure.calls = {}  # each batch is decoded with its own memory of calls
        yield row


class _RowMeasure:
    """The raw tokens of stored rows read in order, with the current batch's calls remembered."""

    def __init__(self, store: Store, session_id: str) -> None:
        # The store reader's own rules, which the counts must follow: which rows
        # orjson may read otherwise, and how many calls a batch remembers.
        self.holds_float = _holds_float

        self.store = store
        self.session_id = session_id
        self.view = input_view(store.root, {})
        self.fast = orjson_loads()
        self.exact = json.loads
        self.plain = parts_decoder(self.view)  # a call's row read apart, as the store reads it
        self.parts_at = store.parts_reader(session_id)
        self.tool_class = ToolPart
        self.calls: dict[Any, tuple[int, int]] = {}
        """The tokens of the batch's assistant tool parts so far, by call id."""
        self.limit = _CALLS_REMEMBERED  # calls a batch remembers before it starts over
        self.found: list[tuple[Any, int]] | None = None
        """``(call id, tokens)`` of the tool parts of the row last measured."""

    def row(self, ordinal: int, role: str, parts_json: Any) -> int:
        """The raw tokens of one row's message."""
        total = None
        if self.fast is not None and type(parts_json) is str:
            try:
                items = self.fast(parts_json)
            except ValueError:
                items = None  # the JSON module accepts more, or raises its own error
            if type(items) is list:
                total = self._measure(items, checked=True)
        if total is None:
            total = self._measure(self.exact(parts_json), checked=False)
            assert total is not None  # only a checked reading gives up
        found = self.found
        if found is not None and role == "assistant":
            self._remember(ordinal, found)
        return total

    def _measure(self, items: Any, *, checked: bool) -> int | None:
        """The row's tokens; its tool parts' ``(call id, tokens)`` go to :attr:`found`.

        None when ``checked`` meets a float in a tool input: orjson reads an
        integer beyond 64 bits as one, and the JSON module writes the two
        differently, so it reads the row instead. Elsewhere the reading
        changes no count (a text or output that is a number cannot be
        measured either way), except a reference to a message number beyond
        64 bits, which no stored message has: it is measured as a part of
        its own, where the store's reader fails to look it up.
        """
        total = 0
        self.found = found = None
        for item in items:
            get = item.get
            if get("type") != "tool":
                total += tokens_for_length(len(get("text", "")))  # estimate_tokens(text)
                continue
            call_id, copy_of = get("call_id", ""), get("copy_of")
            if copy_of is not None and type(copy_of) is int and type(call_id) is str and call_id:
                tokens = self._referenced(copy_of, call_id)
            else:
                data = get("input")
                if checked and self.holds_float(data):
                    return None
                tokens = _tool_tokens(self.view(data), get("output"))
            total += tokens
            if call_id:
                if found is None:
                    self.found = found = []
                found.append((call_id, tokens))
        return total

    def _remember(self, ordinal: int, found: list[tuple[Any, int]]) -> None:
        """Keep an assistant row's tool parts for the references after it, as a batch does."""
        remembered, limit = self.calls, self.limit
        for call_id, tokens in found:
            if len(remembered) >= limit:
                remembered.clear()
            remembered[call_id] = (ordinal, tokens)

    def _referenced(self, ordinal: int, call_id: str) -> int:
        """The tokens of the call part a stored reference stands for."""
        known = self.calls.get(call_id)
        if known is not None and known[0] == ordinal:
            return known[1]
        parts_json = self.parts_at(ordinal)
        if parts_json is not None:
            for part in self.plain(parts_json):
                if type(part) is self.tool_class and part.call_id == call_id:
                    return _tool_tokens(part.input, part.output)
        return _tool_tokens(None, None)  # an unresolved reference: a part without input


def _tool_tokens(data: Any, output: Any) -> int:
    """The raw tokens of a tool part: its input as JSON, and its output."""
    try:
        total = tokens_for_length(len(json_text(data)))
    except (TypeError, ValueError):
        total = estimate_tokens(str(data))
    if output:
        total += estimate_tokens(output)
    return total
