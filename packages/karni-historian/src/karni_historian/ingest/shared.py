"""Reading the team's shared history (``.karni/history/``) into the store's index.

Each file there is one session another user (or this one, on another
machine) shared (``docs/how-to/team-history.md``). :func:`refresh_shared`
brings the index up to date with the folder: a file whose size and time are
the indexed ones is not read again; a new or changed file is read strictly
(:mod:`.shared_format`) and its session imported into the store's ordinary
tables; a file that went away (``git rm``, a checkout) takes its rows with
it. A file that is a link, not a regular file, too large, binary, too deep,
malformed, of a newer format or holding a secret is indexed as ``skipped``
with the reason, for ``doctor``, and the rest are still served. A session
this store ingested itself is counted once: its own rows win. Who shared
each file comes from git (:mod:`.git_authors`), never from the file.
"""

from __future__ import annotations

import os
import time

from karni.agent.common.files import read_regular_file

from karni_historian.errors import SharedFileProblem
from karni_historian.ingest.git_authors import file_authors
from karni_historian.ingest.shared_format import MAX_FILE_BYTES, parse
from karni_historian.secret_patterns import find_secret
from karni_historian.shared_folder import fingerprint, history_folder, listing, settled_stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.store import Store

__all__ = ["check_shared_file", "refresh_if_changed", "refresh_shared"]


def check_shared_file(
    root: str, name: str, kind: str, size: int
) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed session of one shared file, or the one-line reason it cannot be used."""
    if not name.endswith(".json"):
        return None, "is not a shared history file (`<session>.json`)"
    if kind == "link":
        return None, "is a symbolic link, which is never followed"
    if kind != "file":
        return None, "is not a regular file"
    if size > MAX_FILE_BYTES:
        return None, f"is larger than {MAX_FILE_BYTES // 1024} KiB"
    path = os.path.join(history_folder(root), name)
    try:
        data = read_regular_file(path, MAX_FILE_BYTES, follow_symlinks=False)
        document = parse(data, name)
    except SharedFileProblem as problem:
        return None, str(problem)
    except OSError as error:
        return None, f"cannot be read ({error.strerror or error})"
    secret = find_secret(data.decode("utf-8"))
    if secret is not None:
        return None, (
            f"holds what looks like {secret}; remove the file (`git rm`), "
            f"rotate the secret and share the session again"
        )
    return document, None


def refresh_if_changed(store: Store, root: str) -> int:
    """:func:`refresh_shared` when the folder (or ``HEAD``) changed since the last; else 0."""
    current = fingerprint(root)
    known = store.shared_fingerprint()
    if known == current or (known is None and not current):
        return 0
    return refresh_shared(store, root)


def refresh_shared(store: Store, root: str) -> int:
    """Bring the index up to date with the folder; how many files were read or dropped.

    One transaction: a brief reading meanwhile sees the index before or after.
    """
    entries = listing(root)
    index = store.shared_index()
    seen = set()
    touched = 0
    with store.transaction():
        for name, size, mtime, kind in entries:
            if name.startswith("."):
                continue  # .gitkeep, .gitattributes: the folder's own files
            seen.add(name)
            known = index.get(name)
            if known is not None and known[1:3] == (size, mtime):
                continue
            touched += 1
            _read_one(store, root, name, (size, mtime), kind)
        for name in index.keys() - seen:
            touched += 1
            store.forget_shared_file(name)
        shared = [name for name, row in store.shared_index().items() if row[3] == "imported"]
        authors = file_authors(root, shared) if shared else {}
        store.attribute_shared_files(
            (name, *(author or (None, None, None))) for name, author in authors.items()
        )
        store.set_shared_fingerprint(
            fingerprint(root, entries), settled_stamp(root, time.time_ns())
        )
    return touched


def _read_one(store: Store, root: str, name: str, stat: tuple[int, int], kind: str) -> None:
    """Import, count as local or skip one new or changed file."""
    store.forget_shared_file(name)
    document, problem = check_shared_file(root, name, kind, stat[0])
    if document is None:
        store.index_shared_file(name, stat, "skipped", problem=problem)
        return
    session_id = document["session"]["id"]
    if store.is_local_session(session_id):
        store.index_shared_file(name, stat, "local", session_id=session_id)
        return
    store.import_shared_session(name, stat, document)
