"""Sharing the user's condensed history with the team, through git: ``karni-historian share``.

Beside ``brief/``, the other way history leaves the store: each session's
condensed history (compartments, promoted facts, what shaped each file, the
files' notes) is written as one JSON file under ``.karni/history/``, for
the user to commit with their work (``docs/how-to/team-history.md``).
:mod:`.document` builds a session's document from the store, redacted;
:mod:`.fit` keeps it under the size cap; :mod:`.write` checks it for
secrets, writes it and knows the user's consent. Reading shared files back
is a reader's job (:mod:`karni_historian.ingest.shared`).
"""
