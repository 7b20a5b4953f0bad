"""``karni-historian ingest``: import new transcript lines, note the files, read shared history."""

from __future__ import annotations

import sys

from karni_historian.cli.common import PROG, CliError, open_store, progress_stream
from karni_historian.condense.file_notes import note_sessions
from karni_historian.ingest import IngestError, check_sources, ingest
from karni_historian.ingest.shared import refresh_if_changed

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Read the transcripts (``--from`` or the project's), print the report; the exit code."""
    try:
        check_sources(args.sources or ())  # before the store is created
        with open_store(root, create=True) as store:
            report = ingest(
                store,
                root,
                args.sources,
                progress_stream=progress_stream(args),
                other_projects=args.accept_other_project,
            )
            store.reclaim_ingested()  # one's own shared session, ingested here too: local wins
            note_sessions(store, report.sessions)
            refresh_if_changed(store, root)  # the team's shared history, into the same store
    except IngestError as error:
        raise CliError(str(error), 2) from None
    for warning in report.warnings():
        print(f"{PROG}: {warning}", file=sys.stderr)
    if args.verbose:
        for line in report.file_lines():
            print(f"{PROG}: {line}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    return 1 if any(file.other_project for file in report.files) else 0
