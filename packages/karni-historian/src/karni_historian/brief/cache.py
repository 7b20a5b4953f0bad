"""Cache-safe history: the rebuilt block stays byte for byte until a rebuild is warranted.

A run publishes compartments without re-deciding the older ones' tiers.
:func:`history_block` prints the block of the last rebuild exactly, then an
additive block with the compartments published since, at full detail, so
an agent's prompt prefix stays the same between ordinary turns. A rebuild
re-renders everything with decay; it happens when asked, on the first
render, when the historian model or a setting that shapes the block
changed, when compartments of the rebuilt block were rebuilt (``recomp``),
when project memory known at the rebuild was edited, or when the additive
block outgrew :data:`ADDITIVE_SHARE` of the history budget
(``docs/historian/cache-safe.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.budget import tokens_for_length
from karni_historian.store.rebuilds import Rebuild

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from karni_historian.model import Compartment
    from karni_historian.store import Store
    from karni_historian.store.rebuilds import Rebuild

__all__ = ["ADDITIVE_SHARE", "BlockShape", "history_block", "pending_rebuild", "preview_block"]

ADDITIVE_SHARE = 0.25
"""The share of the history budget the additive block may use before a rebuild."""


@dataclass(frozen=True, slots=True)
class BlockShape:
    """What shapes the block: the history budget, dates, and the historian model."""

    budget: int
    dates: bool
    model: str

    def key(self) -> str:
        """The shape as stored with a rebuild."""
        return f"budget={self.budget} dates={int(self.dates)} model={self.model}"


def _digest(compartments: Sequence[Compartment]) -> str:
    # bench row "karni-historian wrapup" runs without it
    import hashlib

    return hashlib.sha256(repr(list(compartments)).encode("utf-8")).hexdigest()


_SINCE_OPEN = "<session-history-since>\n<new-compartments>\n"
_SINCE_CLOSE = "\n</new-compartments>\n</session-history-since>"


def _additive(compartments: Sequence[Compartment], dates: bool) -> str:
    """The compartments published since the rebuild, at full detail; empty when none."""
    if not compartments:
        return ""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.brief.render import compartment_element

    body = "\n\n".join(compartment_element(c, 1, dates=dates) for c in compartments)
    return f"{_SINCE_OPEN}{body}{_SINCE_CLOSE}"


def _reason(
    store: Store,
    last: Rebuild | None,
    compartments: Iterable[Compartment],
    shape: BlockShape,
) -> str | None:
    """Why a rebuild is warranted now, None when the last one still holds.

    ``compartments`` are read once, oldest first, and none is kept: the
    rebuilt ones go into the digest, the later ones count towards the
    additive block until it outgrows its share.
    """
    # bench row "karni-historian wrapup" runs without it
    import hashlib

    from karni_historian.brief.render import compartment_element

    if last is None:
        return "first render"
    if last.shape != shape.key():
        return "the historian model or a setting that shapes the block changed"
    digest = hashlib.sha256(b"[")  # the digest of repr(list), built one item at a time
    kept = 0
    share = int(shape.budget * ADDITIVE_SHARE)
    additive = len(_SINCE_OPEN) + len(_SINCE_CLOSE)
    new = 0
    for compartment in compartments:
        if kept < last.compartment_count:
            digest.update(((", " if kept else "") + repr(compartment)).encode("utf-8"))
            kept += 1
            continue
        additive += len(compartment_element(compartment, 1, dates=shape.dates)) + (2 if new else 0)
        new += 1
        if shape.budget > 0 and tokens_for_length(additive) > share:
            break
    digest.update(b"]")
    if kept < last.compartment_count or digest.hexdigest() != last.compartments_digest:
        return "compartments of the rebuilt block were rebuilt"
    if store.memory_digest(last.memory_max_id)[1] != last.memory_digest:
        return "project memory was edited"
    if new and shape.budget > 0 and tokens_for_length(additive) > share:
        return f"the additive block outgrew its share of the history budget (~{share} tokens)"
    return None


def pending_rebuild(store: Store, session_id: str, shape: BlockShape) -> str | None:
    """Why the next ``render`` rebuilds the session's block, None when it appends only."""
    compartments = (stored.compartment for stored in store.iter_compartments(session_id))
    return _reason(store, store.last_rebuild(session_id), compartments, shape)


def preview_block(store: Store, session_id: str, shape: BlockShape) -> tuple[str, str | None]:
    """The block the next ``render`` prints, and why it rebuilds (None: it appends only).

    Nothing is saved: ``status`` reports the size of this block, so its
    figure is the one ``render`` prints.
    """
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.brief.render import render_history

    compartments = [stored.compartment for stored in store.compartments(session_id)]
    last = store.last_rebuild(session_id)
    reason = _reason(store, last, compartments, shape)
    if reason is None and last is not None:
        return _appended(last, compartments, shape), None
    return render_history(compartments, shape.budget, dates=shape.dates), reason


def _appended(last: Rebuild, compartments: Sequence[Compartment], shape: BlockShape) -> str:
    """The rebuilt block as saved, then the additive block of what was published since."""
    additive = _additive(compartments[last.compartment_count :], shape.dates)
    return f"{last.block}\n\n{additive}" if additive else last.block


def history_block(
    store: Store, session_id: str, shape: BlockShape, *, rebuild: bool = False
) -> str:
    """The session's history as ``render`` prints it, rebuilding (and saving) when warranted."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.brief.render import render_history

    compartments = [stored.compartment for stored in store.compartments(session_id)]
    last = store.last_rebuild(session_id)
    reason = (
        "asked for (render --rebuild)" if rebuild else _reason(store, last, compartments, shape)
    )
    if reason is None and last is not None:
        return _appended(last, compartments, shape)
    block = render_history(compartments, shape.budget, dates=shape.dates)
    memory_max_id, memory_digest = store.memory_digest()
    store.save_rebuild(
        session_id,
        Rebuild(
            block,
            len(compartments),
            _digest(compartments),
            memory_max_id,
            memory_digest,
            shape.key(),
            reason or "first render",
            "",
        ),
    )
    return block
