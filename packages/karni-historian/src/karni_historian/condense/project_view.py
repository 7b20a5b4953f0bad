"""Messages as the project knows them: absolute tool paths shown project-relative.

Agents pass absolute paths to their tools. The chunk and the ``expand``
previews read better, and stay the same on every machine, with the path the
project knows the file by. Only the view changes; stored messages do not.
"""

from __future__ import annotations

import os

from karni.agent.common.paths import project_relative

from karni_historian.model import PATH_KEYS, Message, ToolPart

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from karni_historian.model import Message, TextPart, ToolPart

__all__ = ["input_view", "project_view"]


_CACHE_LIMIT = 4096
"""Paths remembered per call of :func:`project_view`; the cache starts over when full."""


def _relative(root: str, path: str, cache: dict[str, str | None]) -> str | None:
    """``path`` relative to ``root`` when it is absolute and inside it; remembered in ``cache``."""
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    found = None
    if os.path.isabs(path):
        relative = project_relative(root, path)
        found = relative if relative and relative != "." else None
    cache[path] = found
    return found


def project_view(
    messages: Iterable[Message], root: str, cache: dict[str, str | None] | None = None
) -> list[Message]:
    """The messages with absolute tool paths inside ``root`` shown project-relative.

    ``cache`` remembers resolved paths across calls (one dict per run).
    """
    viewer = _Viewer(root, {} if cache is None else cache)
    return [viewer.message(message) for message in messages]


def input_view(root: str, cache: dict[str, str | None] | None = None) -> Callable[[Any], Any]:
    """What :func:`project_view` does to one tool input: a copy with project paths, or itself.

    For the store to apply while it decodes a batch
    (:meth:`karni_historian.store.Store.message_batch`), so that no message is
    copied afterwards.
    """
    return _Viewer(root, {} if cache is None else cache).input


class _Viewer:
    """Messages shown project-relative, with the model's classes and path keys looked up once."""

    def __init__(self, root: str, cache: dict[str, str | None]) -> None:
        self.root = root
        self.cache = cache
        self.keys = PATH_KEYS
        self.message_class = Message
        self.tool_class = ToolPart

    def message(self, message: Message) -> Message:
        """``message``, or a copy whose tool inputs name project files relatively."""
        changed: list[TextPart | ToolPart] | None = None
        for index, part in enumerate(message.parts):
            data = getattr(part, "input", None)
            if not isinstance(data, dict):
                continue
            viewed = self.input(data)
            if viewed is not data:
                assert isinstance(part, self.tool_class)
                changed = changed or list(message.parts)
                changed[index] = self.tool_class(
                    part.name, viewed, part.output, part.call_id, part.is_error, part.metadata
                )
        if changed is None:
            return message
        m = message
        return self.message_class(
            m.ordinal, m.role, tuple(changed), m.session_id, m.timestamp, m.message_id
        )

    def input(self, data: Any) -> Any:
        """A tool input whose path keys name files inside the project relatively, else ``data``."""
        if not isinstance(data, dict):
            return data
        cache = self.cache
        updates: dict[str, object] | None = None
        for key in self.keys:
            value = data.get(key)
            if isinstance(value, str):
                relative = cache[value] if value in cache else _relative(self.root, value, cache)
                if relative:
                    if updates is None:
                        updates = {}
                    updates[key] = relative
        return data if updates is None else {**data, **updates}
