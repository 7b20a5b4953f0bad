r"""Reading appended transcript lines from a byte offset, in bounded memory.

Transcripts are append-only JSONL files written while an agent runs, so the
last line can be half-written. :func:`iter_lines` yields only complete lines
(those ending in ``\\n``) with the byte offset just past each one; whatever
follows the last newline is left for the next run. Files are read in fixed
blocks, so memory does not grow with file size.
"""

from __future__ import annotations

import json
import os

__all__ = ["BLOCK_SIZE", "MAX_LINE_BYTES", "iter_lines", "read_json_object"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

BLOCK_SIZE = 1 << 20
"""Bytes read from the file at a time."""

MAX_LINE_BYTES = 64 << 20
"""A line longer than this is skipped (reported as malformed) without being held in memory."""

OVERSIZED = b"\x00oversized"
"""Yielded in place of a line longer than :data:`MAX_LINE_BYTES`."""


def iter_lines(handle: BinaryIO, offset: int) -> Iterator[tuple[bytes, int]]:
    r"""Yield ``(line, end_offset)`` for each complete line from ``offset`` on.

    ``line`` excludes its ``\\n``; ``end_offset`` is the byte offset just past
    it, the value to store as the cursor once the line is consumed. Bytes after
    the last newline (a torn write) are not yielded. A line longer than
    :data:`MAX_LINE_BYTES` is yielded as :data:`OVERSIZED`.
    """
    handle.seek(offset)
    position = offset
    pending = b""
    skipping = False
    while True:
        block = handle.read(BLOCK_SIZE)
        if not block:
            return
        start = 0
        while True:
            newline = block.find(b"\n", start)
            if newline == -1:
                break
            piece = block[start:newline]
            end = position + newline + 1
            if skipping:
                skipping = False
                yield OVERSIZED, end
            elif pending:
                yield pending + piece, end
            else:
                yield piece, end
            pending = b""
            start = newline + 1
        rest = block[start:]
        if not skipping:
            if len(pending) + len(rest) > MAX_LINE_BYTES:
                pending = b""
                skipping = True
            else:
                pending += rest
        position += len(block)


def read_json_object(path: str, limit: int = 64 << 20) -> dict[str, Any] | None:
    """A whole JSON file (a setting, a subagent's meta, an OpenCode record) as an object.

    None when it cannot be read, is not JSON, is not an object, or is longer
    than ``limit`` bytes.
    """
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(limit + 1)) if os.path.getsize(path) <= limit else None
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
