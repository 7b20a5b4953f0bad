"""The historian's chunk (documented address).

The code lives in :mod:`karni_historian.condense.chunk`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.condense.chunk import ChunkCoverageError, build_chunk

__all__ = ["ChunkCoverageError", "build_chunk"]
