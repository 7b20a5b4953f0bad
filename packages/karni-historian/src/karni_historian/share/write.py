"""Writing a session's shared file: consent, the secret check, the size cap, the atomic write.

Sharing is the user's act (``docs/how-to/team-history.md``): running
``karni-historian share`` is consent for what it names; the end-of-session
hook (``karni hooks install --share``) runs ``share --auto``, which shares
only when the user's own settings say so for this project
(``historian.share``: true, or a list of project folders). A project file
can only recommend it (``historian.share_recommended``, which ``doctor``
mentions). A session's text still holding a secret after redaction is
refused with one line and nothing is written for it. The file is written
atomically, never through a link, and only when its bytes change: sharing
again with nothing new leaves it as it was. One file per session, named by
its id, so two people sharing at once never touch the same file.
"""

from __future__ import annotations

import os

from karni.agent.common.errors import PathError
from karni.agent.common.files import read_regular_file, write_atomic

from karni_historian.consent import consented, recommended
from karni_historian.errors import ShareError
from karni_historian.ingest.shared_format import MAX_FILE_BYTES, file_name, session_id_problem
from karni_historian.secret_patterns import find_secret
from karni_historian.share.document import session_document
from karni_historian.share.fit import fit
from karni_historian.shared_folder import HISTORY_FOLDER, history_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.store import Store

__all__ = ["Shared", "consented", "recommended", "share_session", "shareable_sessions"]


class Shared:
    """What sharing one session did.

    Attributes:
        session_id: The session.
        path: Its file, project-relative (``.karni/history/ID.json``).
        text: The file's text (what was or would be written).
        state: ``written``, ``unchanged`` or ``empty`` (nothing to share).
    """

    __slots__ = ("path", "session_id", "state", "text")

    def __init__(self, session_id: str, path: str, text: str, state: str) -> None:
        """Create the record."""
        self.session_id = session_id
        self.path = path
        self.text = text
        self.state = state


def shareable_sessions(store: Store) -> list[str]:
    """The sessions this store ingested itself (not shared by others), newest first."""
    imported = {
        session
        for session, _size, _mtime, state in store.shared_index().values()
        if state == "imported" and session
    }
    return [session.id for session in store.sessions() if session.id not in imported]


def _existing(path: str) -> bytes | None:
    try:
        return read_regular_file(path, MAX_FILE_BYTES * 4, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except (OSError, PathError) as error:
        raise ShareError(
            f"{path} cannot be replaced ({error}); remove it (it must be a regular file, "
            f"never a link) and share again"
        ) from None


def share_session(store: Store, root: str, session_id: str, *, dry_run: bool = False) -> Shared:
    """Build, check and (unless ``dry_run``) write one session's shared file.

    Raises:
        ShareError: The session's id cannot name a file, its text still holds a
            secret after redaction (nothing is written), or the file cannot be written.
    """
    problem = session_id_problem(session_id)
    if problem is not None:
        raise ShareError(f"session {session_id!r} cannot be shared: its id {problem}")
    relative = "/".join((*HISTORY_FOLDER, file_name(session_id)))
    document = session_document(store, session_id)
    if not (document["compartments"] or document["facts"] or document["files"]):
        return Shared(session_id, relative, "", "empty")
    text = fit(document)
    secret = find_secret(text)
    if secret is not None:
        raise ShareError(
            f"session {session_id} refused: its shared text still holds what looks like {secret} "
            f"after redaction (a file path or a name); nothing was written for it"
        )
    path = os.path.join(history_folder(root), file_name(session_id))
    data = text.encode("utf-8")
    if _existing(path) == data:
        return Shared(session_id, relative, text, "unchanged")
    if not dry_run:
        try:
            write_atomic(path, data, within=root)
        except (OSError, PathError) as error:
            raise ShareError(
                f"cannot write {relative}: {error}; make .karni/history a writable folder "
                f"(not a link) and share again"
            ) from None
    return Shared(session_id, relative, text, "written")
