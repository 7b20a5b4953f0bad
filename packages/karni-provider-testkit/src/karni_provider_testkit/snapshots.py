r"""Byte-exact text snapshots for syrupy.

syrupy's default (amber) format indents text and folds ``\\r``, so it is not
the literal output. This extension stores each snapshot as a raw file, encoded
as UTF-8 by us: ``\\r\\n``, trailing spaces and a missing final newline all
survive, and the file on disk is exactly what the program printed.
"""

from __future__ import annotations

from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension

__all__ = ["RawTextSnapshotExtension"]


class RawTextSnapshotExtension(SingleFileSnapshotExtension):
    """Stores a ``str`` (or ``bytes``) snapshot byte for byte in a ``.txt`` file."""

    file_extension = "txt"

    def serialize(self, data: Any, **kwargs: Any) -> bytes:
        """Encode text as UTF-8; pass bytes through unchanged."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, bytes):
            raise TypeError(
                f"snapshot_text stores text or bytes, not {type(data).__name__}; "
                f"convert the value to str first"
            )
        return data  # what the base class would return for bytes: the same bytes
