"""``karni-historian run``: condense each session whose trigger fires (or ``--force``)."""

from __future__ import annotations

import sys

from karni_historian.cli.common import PROG, progress_stream
from karni_historian.cli.condensing import each_session, traced
from karni_historian.condense import runner

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from karni_historian.condense.models.session import PreparedSession
    from karni_historian.condense.runner import RunOutcome
    from karni_historian.store import Store

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Run the triggers of every session asked for, condensing where one fires; the exit code."""
    return each_session(
        args,
        root,
        lambda store, session_id, prepared: _run_session(store, session_id, prepared, args),
    )


def _run_session(
    store: Store, session_id: str, prepared: PreparedSession, args: argparse.Namespace
) -> RunOutcome | None:
    """Condense one session when a trigger fires (or ``--force``); None when nothing ran."""
    historian = traced(args, session_id, prepared.historian)
    plan = runner.plan_run(store, session_id, prepared.settings)
    if not plan.settled:
        return runner.run(store, session_id, plan=plan)  # says why nothing is settled
    decision = None if args.force else plan.decision(exact=False)
    name = f"session {session_id}"
    if args.dry_run:
        span = f"messages {plan.covered_to + 1}-{plan.target - 1}"
        if decision is None or decision.fire:
            why = "forced" if decision is None else f"trigger {decision.reason}: {decision.detail}"
            print(f"{name}: would condense {span} with {prepared.chain.name} ({why})")
        else:
            print(f"{name}: would not condense {span}: no trigger fired ({decision.detail})")
        return None
    if decision is not None and not decision.fire:
        if args.quiet:
            return None
        print(
            f"{name}: no trigger fired ({decision.detail}); nothing condensed, "
            f"pass --force to condense now"
        )
        return None
    if decision is not None and not args.quiet:
        print(
            f"{PROG}: {name}: trigger {decision.reason} fired: {decision.detail}", file=sys.stderr
        )
    return runner.run(
        store, session_id, plan=plan, historian=historian, progress_stream=progress_stream(args)
    )
