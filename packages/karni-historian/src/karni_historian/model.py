"""The shared message model of the historian.

Every other module speaks in these few frozen records: transcript ingest turns
agent sessions into :class:`Message` objects, the chunk builder reads them, the
historian (built-in or model-backed) turns them into :class:`Compartment` and
:class:`Fact` records, and rendering reads compartments back. Keeping them in one
small module with no imports beyond the standard library lets the store and
the pure core evolve independently.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PATH_KEYS", "Compartment", "Fact", "Message", "TextPart", "ToolPart"]

PATH_KEYS = ("file_path", "filePath", "notebook_path", "path")
"""Tool input keys that name the file a call works on, in the order they are tried."""


@dataclass(frozen=True, slots=True)
class TextPart:
    """A text part of a message.

    Attributes:
        text: The text as the agent or user wrote it.
        ignored: True for synthetic or injected text that is not part of the
            conversation (system reminders, injected context, and so on).
    """

    text: str
    ignored: bool = False


@dataclass(frozen=True, slots=True)
class ToolPart:
    """One tool call, with its result attached when known.

    Attributes:
        name: The tool name as the agent called it (for example ``Bash``).
        input: The tool input, usually a mapping decoded from JSON.
        output: The tool result text, or None while pending or when no result
            was recorded.
        call_id: The provider's call id, used to pair calls and results.
        is_error: True when the tool reported an error.
        metadata: Any extra provider data worth keeping.
    """

    name: str
    input: Any
    output: str | None = None
    call_id: str = ""
    is_error: bool = False
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a session.

    Attributes:
        ordinal: The 1-based position of the message in its session.
        role: ``"user"``, ``"assistant"`` or ``"system"``.
        parts: The text and tool parts, in order.
        session_id: The session the message belongs to.
        timestamp: An ISO 8601 timestamp, when known.
        message_id: The provider's message id, when known.
    """

    ordinal: int
    role: str
    parts: tuple[TextPart | ToolPart, ...]
    session_id: str = ""
    timestamp: str | None = None
    message_id: str = ""


@dataclass(frozen=True, slots=True)
class Compartment:
    """A condensed episode covering an inclusive range of raw messages.

    Attributes:
        start: The first message ordinal covered (inclusive).
        end: The last message ordinal covered (inclusive).
        title: A short title for the episode.
        p1: The full paraphrase (tier 1).
        p2: A condensed paraphrase (tier 2).
        p3: A short paraphrase (tier 3).
        p4: An anchor-only paraphrase (tier 4); may be empty.
        importance: 1 to 100; 50 is neutral.
        start_date: The date of the first message, when known.
        end_date: The date of the last message, when known.
        episode_type: The kind of episode, when the historian gave one.
        legacy: True for rows written before tiered paraphrases existed.
        content: The single body of a legacy row.
    """

    start: int
    end: int
    title: str
    p1: str = ""
    p2: str = ""
    p3: str = ""
    p4: str = ""
    importance: int = 50
    start_date: str | None = None
    end_date: str | None = None
    episode_type: str | None = None
    legacy: bool = False
    content: str = ""


@dataclass(frozen=True, slots=True)
class Fact:
    """A durable project-memory fact promoted from compartments.

    Attributes:
        category: The memory category (for example ``CONSTRAINTS``).
        content: The fact, one sentence.
    """

    category: str
    content: str
