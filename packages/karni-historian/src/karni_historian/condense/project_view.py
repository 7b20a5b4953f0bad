"""Messages as the project knows them: absolute tool paths shown project-relative.

Agents pass absolute paths to their tools. The chunk and the ``expand``
previews read better, and stay the same on every machine, with the path the
project knows the file by. Only the view changes; stored messages do not.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.model import Message, ToolPart

__all__ = ["project_view"]


def _relative_input(part: ToolPart, root: str) -> dict[str, object]:
    """The path keys of the part's input that name a file inside the project, made relative."""
    from karni.agent.common.paths import project_relative

    from karni_historian.model import PATH_KEYS

    assert isinstance(part.input, dict)
    updates: dict[str, object] = {}
    for key in PATH_KEYS:
        value = part.input.get(key)
        if isinstance(value, str) and os.path.isabs(value):
            relative = project_relative(root, value)
            if relative and relative != ".":
                updates[key] = relative
    return updates


def project_view(messages: Sequence[Message], root: str) -> list[Message]:
    """The messages with absolute tool paths inside ``root`` shown project-relative."""
    from dataclasses import replace

    from karni_historian.model import ToolPart

    viewed: list[Message] = []
    for message in messages:
        parts = list(message.parts)
        changed = False
        for index, part in enumerate(parts):
            if isinstance(part, ToolPart) and isinstance(part.input, dict):
                updates = _relative_input(part, root)
                if updates:
                    parts[index] = replace(part, input={**part.input, **updates})
                    changed = True
        viewed.append(replace(message, parts=tuple(parts)) if changed else message)
    return viewed
