"""Whether a folder belongs to the user running Karni.

A walk up the directory tree may reach folders other users control (``/tmp``,
a shared mount). A store or setting found there could be planted, so code
that walks up asks :func:`owned_by_current_user` before trusting what it finds.
"""

from __future__ import annotations

import os

__all__ = ["owned_by_current_user"]


def owned_by_current_user(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (not followed when a symlink) is owned by the current user.

    On systems without user ids (Windows) every path counts as owned. A path
    that cannot be examined is not owned.
    """
    getuid = getattr(os, "getuid", None)
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return False
    return getuid is None or info.st_uid == getuid()
