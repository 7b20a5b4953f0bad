"""The text of a compartment at a decay tier, shared by the block and the briefs.

Its own module so a file brief (``karni context --with-history``) reads a
paraphrase without importing the block renderer (``docs/performance.md``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.model import Compartment
    from karni_historian.store.records import BriefEpisode

__all__ = ["paraphrase"]


def paraphrase(c: Compartment | BriefEpisode, t: int) -> str:
    """Return the body of a compartment at tier ``t``, 1–4 (``docs/historian/blocks.md``).

    ``p_t`` when it is set (an empty ``p4`` is a real anchor, an empty ``p2`` or
    ``p3`` counts as missing), else the nearest denser non-empty tier; always
    trimmed. A compartment without ``p1`` uses its ``content`` as ``p1``. An
    empty result means a title-only element.

    Args:
        c: A compartment.
        t: The tier, 1–4.

    Returns:
        The trimmed body text (not escaped).
    """
    tiers = (c.p1 or c.content, c.p2, c.p3, c.p4)
    chosen = tiers[t - 1]
    if isinstance(chosen, str) and (chosen != "" or t in (1, 4)):
        return chosen.strip()
    for denser in reversed(tiers[: t - 1]):
        if isinstance(denser, str) and denser.strip():
            return denser.strip()
    return ""
