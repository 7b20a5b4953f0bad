"""Text cut to a length without breaking a word or a backticked name in two.

Notes, quotes and brief lines all have a length limit. Shared by the
condensing (:mod:`karni_historian.condense.file_notes`) and the brief, which
runs before every edit: this module imports nothing.
"""

from __future__ import annotations

__all__ = ["shorten"]


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters: whole when it fits, else cut at a word with ``…``.

    The cut prefers the end of a clause (``;``, ``,``, ``:``, `` - ``) in the
    last third, never falls inside a backticked name, and the ellipsis counts.
    """
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 1)]
    if cut.count("`") % 2:
        cut = cut[: cut.rfind("`")]
    best = max(cut.rfind("; "), cut.rfind(", "), cut.rfind(": "), cut.rfind(" - "))
    if best < len(cut) * 2 // 3:
        best = cut.rfind(" ")
    if best > len(cut) // 3:
        cut = cut[:best]
    return cut.rstrip(" ,;:-(") + "…"
