"""Which projects the user has said Karni may run code from.

A cloned repository is a stranger's: its ``.venv/bin/python`` could be any
program. Karni runs a project's own code (Django's system checks through
the project's interpreter) only when the user has trusted the project with
``karni trust``. Trust is recorded outside every repository, in
``trusted-projects.json`` in the user's configuration folder, keyed by the
project's resolved path and the user id owning it: a project moved, replaced
or taken over by another user is no longer trusted. ``KARNI_TRUST_PROJECT=1``
trusts the working project for one run (for CI). See ``docs/security.md``.
"""

from __future__ import annotations

import json
import os

from karni.agent.common import ownership
from karni.agent.common.ci import FALSE_VALUES
from karni.agent.common.config import user_config_dir
from karni.agent.common.errors import KarniCoreError, PathError
from karni.agent.common.files import read_regular_file, write_atomic

__all__ = [
    "TRUST_FILE",
    "TRUST_VARIABLE",
    "TrustError",
    "TrustedProject",
    "is_trusted",
    "revoke",
    "trust",
    "trust_file_path",
    "trusted_projects",
]

TRUST_FILE = "trusted-projects.json"
"""The file, in the user's configuration folder, recording trusted projects."""

TRUST_VARIABLE = "KARNI_TRUST_PROJECT"
"""Set to ``1`` (or ``true``, ``yes``, ``on``) to trust the working project for one run."""

_MAX_TRUST_BYTES = 1 << 20


class TrustError(KarniCoreError):
    """Trust cannot be recorded or read; the message names the thing and the fix."""


class TrustedProject:
    """One trusted project: its resolved path and the user id that owned it when trusted."""

    __slots__ = ("owner", "path")

    def __init__(self, path: str, owner: int | None) -> None:
        self.path = path
        self.owner = owner

    def __repr__(self) -> str:
        return f"TrustedProject({self.path!r}, {self.owner!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TrustedProject) and (self.path, self.owner) == (
            other.path,
            other.owner,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.owner))


def trust_file_path() -> str:
    """``trusted-projects.json`` in the user's configuration folder."""
    return os.path.join(user_config_dir(), TRUST_FILE)


def _key(project_root: str | os.PathLike[str]) -> TrustedProject:
    path = os.path.realpath(project_root)
    return TrustedProject(path, ownership.owner_uid(path))


def _from_environment() -> bool:
    return os.environ.get(TRUST_VARIABLE, "").strip().lower() not in FALSE_VALUES


def _not_the_list(path: str, why: object) -> str:
    """The line for a trust record Karni cannot read as its own: keep it, start a new one."""
    return (
        f"{path} is not Karni's list of trusted projects ({why}); move it aside (it may hold "
        f"projects you trusted) and run `karni trust` in each of them again"
    )


def trusted_projects() -> list[TrustedProject]:
    """Every project recorded as trusted, in the order trusted.

    Raises:
        TrustError: The file is not a regular file of a sane size, or not
            the JSON Karni writes.
    """
    path = trust_file_path()
    try:
        data = json.loads(read_regular_file(path, _MAX_TRUST_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return []
    except PathError as error:
        raise TrustError(
            f"{error.strerror}; move it away and run `karni trust` in your projects again"
        ) from None
    except OSError as error:
        raise TrustError(
            f"cannot read {path} ({error.strerror or error}); check its permissions"
        ) from None
    except ValueError as error:
        raise TrustError(_not_the_list(path, error)) from None
    entries = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise TrustError(_not_the_list(path, "no list of projects"))
    return [
        TrustedProject(entry["path"], entry.get("owner"))
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("path"), str)
    ]


def is_trusted(project_root: str | os.PathLike[str]) -> bool:
    """Whether the user trusts ``project_root`` (its resolved path and owner are recorded).

    ``KARNI_TRUST_PROJECT`` set to a true value trusts it too. An unreadable
    record trusts nothing.
    """
    if _from_environment():
        return True
    try:
        return _key(project_root) in trusted_projects()
    except TrustError:
        return False


def _save(projects: list[TrustedProject]) -> None:
    folder = user_config_dir()
    os.makedirs(folder, exist_ok=True)
    document = {"projects": [{"path": p.path, "owner": p.owner} for p in projects]}
    path = trust_file_path()
    try:
        write_atomic(path, json.dumps(document, indent=2) + "\n", within=folder, mode=0o600)
    except OSError as error:
        raise TrustError(f"cannot write {path}: {error.strerror or error}") from None


def trust(project_root: str | os.PathLike[str], *, force: bool = False) -> TrustedProject:
    """Record ``project_root`` as trusted and return the record.

    Raises:
        TrustError: It is owned by another user and ``force`` is False, or
            the record cannot be written.
    """
    key = _key(project_root)
    if not force and not ownership.owned_by_current_user(key.path):
        raise TrustError(
            f"{key.path} is owned by another user (uid {key.owner}); its code would run as "
            f"you: pass --force only if you are sure"
        )
    projects = trusted_projects()
    if key not in projects:
        _save([*projects, key])
    return key


def revoke(project_root: str | os.PathLike[str]) -> bool:
    """Forget ``project_root`` (every owner of its resolved path); whether it was trusted.

    Raises:
        TrustError: The record cannot be read or written.
    """
    path = os.path.realpath(project_root)
    projects = trusted_projects()
    kept = [project for project in projects if project.path != path]
    if len(kept) == len(projects):
        return False
    _save(kept)
    return True
