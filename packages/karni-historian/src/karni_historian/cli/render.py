"""``karni-historian render``: print a session's ``<session-history>`` block."""

from __future__ import annotations

from karni_historian.brief.cache import BlockShape, history_block
from karni_historian.cli.common import (
    config_files,
    open_store,
    positive,
    session_of,
    settings_of,
)
from karni_historian.condense.models.session import chain_for_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from karni_historian.condense.models.settings import ConfigFiles
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = ["block_shape", "run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print the block in the history budget (or ``--budget``); the exit code."""
    settings = settings_of(root)
    budget = (
        positive(args.budget, "--budget") if args.budget is not None else settings.history_budget
    )
    files = config_files(root)
    with open_store(root) as store:
        session_id = session_of(store, args.session)
        shape = block_shape(store, session_id, settings, files, budget)
        print(history_block(store, session_id, shape, rebuild=args.rebuild))
    return 0


def block_shape(
    store: Store, session_id: str, settings: Settings, files: ConfigFiles, budget: int
) -> BlockShape:
    """What shapes the session's block: the budget, dates and its historian chain."""
    chain = chain_for_session(store, session_id, files, default_window=settings.historian_context)
    return BlockShape(budget, settings.temporal_awareness, chain.name)
