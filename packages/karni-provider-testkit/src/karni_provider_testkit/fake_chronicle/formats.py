"""The formats the double shares with its helpers: JSON, ULIDs, timestamps, text, files.

Chronicle prints compact JSON with raw UTF-8, names events and sessions with
ULIDs, stamps them with canonical UTC times and collapses and cuts text the
same way everywhere; the double's program and the
Python helpers that write its store fixture must agree on all of these, so
they live here once.
"""

from __future__ import annotations

__all__ = [
    "FIRST_TS",
    "VERSION",
    "collapse",
    "dumps",
    "iso",
    "ms",
    "truncate",
    "ulid",
    "utc_now",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VERSION = "0.2.0"
"""The version the double reports: ``--version`` and the ``chronicle-cli@`` stamp on events.

It is the version in the contract's stored package.json.
"""

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

FIRST_TS = "2026-07-20T09:00:00.000Z"
"""The timestamp of the first thing added to an empty fake store."""


def collapse(text: str) -> str:
    """``text`` with every whitespace run (newlines included) made one space, trimmed."""
    return " ".join(text.split())


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters: the first ``limit - 1`` and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def dumps(value: Any) -> str:
    """Compact JSON with non-ASCII as raw UTF-8, as ``JSON.stringify`` prints it."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def ulid(ms: int, seed: str) -> str:
    """A 26-character Crockford ULID for ``ms``; its random part is derived from ``seed``."""
    import hashlib

    time_part = "".join(CROCKFORD[(ms >> shift) & 31] for shift in range(45, -5, -5))
    digest = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:10], "big")
    random_part = "".join(CROCKFORD[(digest >> shift) & 31] for shift in range(75, -5, -5))
    return time_part + random_part


def iso(ms: int) -> str:
    """The canonical UTC timestamp ``YYYY-MM-DDTHH:MM:SS.mmmZ`` for ``ms`` since the epoch."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def ms(ts: str) -> int:
    """Milliseconds since the epoch for a canonical UTC timestamp."""
    import calendar
    import time

    seconds = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1000 + int(ts[20:23] or 0)


def utc_now() -> tuple[str, str, int]:
    """Now, as a canonical timestamp, its UTC day (``YYYY-MM-DD``) and milliseconds."""
    import time

    now = int(time.time() * 1000)
    ts = iso(now)
    return ts, ts[:10], now
