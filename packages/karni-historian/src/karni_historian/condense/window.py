"""A session's messages read from the store a batch at a time, as a run moves through them.

``wrapup``, ``run`` and ``recomp`` condense a session chunk by chunk. Holding
every message of a long session would make their memory grow with the store,
so they read through a :class:`MessageWindow` instead: messages are fetched
in batches of :data:`BATCH_MESSAGES` by ordinal, shown project-relative
as they are decoded (:mod:`karni_historian.condense.project_view`), and
forgotten once a chunk before them is published. What a run needs from the
whole session is read without building its messages: the tool arcs
(:meth:`MessageWindow.arcs`, from the rows that name a call id) and the
messages that read a ``.env`` file, kept for the model chain's redaction
(``docs/historian/store.md``).
"""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter

from karni_historian.condense.project_view import input_view, project_view

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from karni_historian.model import Message
    from karni_historian.store import Store

__all__ = [
    "BATCH_MESSAGES",
    "LOOKAHEAD_MESSAGES",
    "MessageWindow",
    "newest_first",
    "stream_messages",
]

BATCH_MESSAGES = 1000
"""Messages fetched from the store per query."""

LOOKAHEAD_MESSAGES = 200
"""Messages after a chunk's end also handed to the historian (results of its last calls)."""


class MessageWindow:
    """The messages of one session from an ordinal on, fetched in batches.

    Args:
        store: The project's store.
        session_id: The session.
        origin: The first ordinal the run takes the session's tool arcs and
            ``.env`` reads from.
        start: The first ordinal fetched (the first one to condense).
        batch: Messages per query (default :data:`BATCH_MESSAGES`).
        arcs: The session's tool arcs from ``origin`` on, when already read.
    """

    def __init__(
        self,
        store: Store,
        session_id: str,
        origin: int,
        start: int,
        batch: int | None = None,
        arcs: list[tuple[int, int]] | None = None,
    ) -> None:
        """Start before any message is fetched."""
        self.store = store
        self.session_id = session_id
        self.origin = origin
        self.batch = batch or BATCH_MESSAGES
        self.loaded: list[Message] = []
        self.by_ordinal: dict[int, Message] = {}
        self._next = start
        self._exhausted = False
        self._paths: dict[str, str | None] = {}
        self._view = input_view(store.root, self._paths)
        self._arcs = arcs
        self._env_reads: list[Message] | None = None
        self.queries = 0
        """Batches fetched so far."""

    def arcs(self) -> list[tuple[int, int]]:
        """The completed tool arcs of the session from :attr:`origin` on."""
        # bench row "karni-historian ingest" runs without it
        from karni_historian.condense.boundaries import arcs_of_calls

        if self._arcs is None:
            self._arcs = arcs_of_calls(self.store.tool_part_calls(self.session_id, self.origin))
        return self._arcs

    def load_next(self) -> bool:
        """Fetch the next batch; False when the session has no more messages."""
        if self._exhausted:
            return False
        viewed = self.store.message_batch(
            self.session_id, self._next, self.batch, tool_input=self._view
        )
        self.queries += 1
        if len(viewed) < self.batch:
            self._exhausted = True
        if not viewed:
            return False
        self.loaded.extend(viewed)
        self.by_ordinal.update((message.ordinal, message) for message in viewed)
        self._next = viewed[-1].ordinal + 1
        return True

    def load_through(self, ordinal: int) -> None:
        """Fetch until the message at ``ordinal`` (or the session's last) is loaded."""
        while (not self.loaded or self.loaded[-1].ordinal < ordinal) and self.load_next():
            pass

    def iter_from(self, offset: int, stop: int) -> Iterator[Message]:
        """The messages from ``offset`` on, fetched as needed, through the first past ``stop - 1``.

        What :func:`karni_historian.condense.chunk.build_chunk` reads: it stops
        early when its budget is full, and nothing after ``stop`` changes it.
        """
        index = 0
        while True:
            while index >= len(self.loaded):
                if not self.load_next():
                    return
            message = self.loaded[index]
            index += 1
            if message.ordinal < offset:
                continue
            yield message
            if message.ordinal >= stop:
                return

    def forget_before(self, ordinal: int) -> None:
        """Drop the loaded messages before ``ordinal`` (a published chunk's)."""
        loaded = self.loaded
        keep = bisect_left(loaded, ordinal, key=attrgetter("ordinal"))  # loaded in order
        if keep:
            by_ordinal = self.by_ordinal
            for message in loaded[:keep]:
                del by_ordinal[message.ordinal]
            del loaded[:keep]

    def for_historian(self, end: int, *, env_reads: bool = True) -> list[Message]:
        """What a historian reads for a chunk ending at ``end``.

        The loaded messages through ``end`` and :data:`LOOKAHEAD_MESSAGES`
        after it, with the earlier messages that read a ``.env`` file and
        both ends of every tool arc still open at ``end``, in order (unless
        ``env_reads`` is false: the built-in historian reads only the chunk's
        own messages).
        """
        self.load_through(end + LOOKAHEAD_MESSAGES)
        if not env_reads:
            return self.loaded
        first = self.loaded[0].ordinal if self.loaded else self._next
        extra = {m.ordinal: m for m in self._earlier_env_reads() if m.ordinal < first}
        extra.update((m.ordinal, m) for m in self._arc_ends(end))
        return sorted([*extra.values(), *self.loaded], key=lambda message: message.ordinal)

    def _arc_ends(self, end: int) -> list[Message]:
        """The calls and results outside the loaded stretch of the arcs open at ``end``.

        A historian that checks its own boundaries against the arcs then
        sees every arc the run checks it against.
        """
        if not self.loaded:
            return []
        first, last = self.loaded[0].ordinal, self.loaded[-1].ordinal
        wanted = {
            ordinal
            for call, result in self.arcs()
            if call <= end < result and (call < first or result > last)
            for ordinal in (call, result)
            if not first <= ordinal <= last
        }
        found = self.store.messages_at(self.session_id, sorted(wanted))
        return project_view(found, self.store.root, self._paths)

    def _earlier_env_reads(self) -> list[Message]:
        """The messages from :attr:`origin` on whose tool calls read a ``.env`` file."""
        if self._env_reads is None:
            # bench row "karni-historian ingest" runs without it
            from karni_historian.condense.models.redaction import env_file_values

            last = self.store.message_count(self.session_id)
            mentioning = self.store.messages_mentioning(self.session_id, ".env", self.origin, last)
            viewed = project_view(mentioning, self.store.root, self._paths)
            self._env_reads = [m for m in viewed if env_file_values([m])]
        return self._env_reads


def stream_messages(
    store: Store, session_id: str, start: int, batch: int | None = None
) -> Iterator[Message]:
    """The session's messages from ``start`` on, project-relative, one batch held at a time.

    A :class:`MessageWindow` that forgets each batch once it is handed out.
    """
    window = MessageWindow(store, session_id, start, start, batch)
    while window.load_next():
        yield from window.loaded
        window.forget_before(window.loaded[-1].ordinal + 1)


def newest_first(
    store: Store, session_id: str, first: int, batch: int | None = None
) -> Iterator[Message]:
    """The session's messages down to ordinal ``first``, newest first, as stored, in batches."""
    batch = batch or BATCH_MESSAGES
    high = store.message_count(session_id)
    while high >= first:
        low = max(first, high - batch + 1)
        yield from reversed(store.messages(session_id, low, high))
        high = low - 1
