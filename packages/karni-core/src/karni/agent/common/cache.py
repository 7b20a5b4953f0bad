"""The one home of Karni's small on-disk caches: where they live, how a file is read and written.

Three caches spare ``karni context`` work it would otherwise repeat before
every edit: the entry-point index (:mod:`karni.agent.common.entry_points`),
the remembered store markers (:mod:`karni.agent.history.remembered`) and the
CLI's rendered inventory (``karni.cli.inventory.cache``); two more spare
readers of the settings files a TOML parser
(:mod:`karni.agent.common.config_cache`) and of ``karni.rules.py`` the AST
reader (``karni.cli.rules.cache``). Each decides what
it stores and when an entry is stale; this module owns what they share:

- **Where**: ``$KARNI_CACHE_DIR``, else ``$XDG_CACHE_HOME/karni`` (default
  ``~/.cache/karni``; a relative ``XDG_CACHE_HOME`` is ignored, as the XDG
  Base Directory specification says); an empty ``KARNI_CACHE_DIR`` turns
  every cache off. A cache file is named ``KIND-HASH.txt``, ``HASH`` the
  64-bit FNV-1a hash of what the cache is for (computed in Python: loading
  ``zlib`` would cost more).
- **Racy timestamps**: file-system times are coarse, so a file modified less
  than :data:`RACY_NS` before a cache was written may change again within the
  same tick without its time changing. Such a fact is never trusted
  (:func:`trust_horizon`).
- **Reading**: never through a link, only from a regular file (a FIFO is
  refused at once), at most :data:`MAX_CACHE_BYTES`, and only a complete file:
  the first line is the cache's format tag and the byte length of the body
  that follows, so a truncated or half-written file is no cache.
- **Writing**: a temporary file beside the target and :func:`os.replace`
  (:func:`karni.agent.common.files.write_atomic`), never through a link, in an
  owner-only folder. A cache that cannot be read or written is only a slower
  run: every failure here means "no cache", never an error.

Reading uses ``os`` alone, so a run served from the caches loads neither the
error classes nor the safe-write module. See docs/performance.md.
"""

from __future__ import annotations

import os
import stat
import time

__all__ = [
    "MAX_CACHE_BYTES",
    "RACY_NS",
    "cache_dir",
    "cache_file",
    "fnv1a",
    "read_cache",
    "trust_horizon",
    "write_cache",
]

RACY_NS = 2_000_000_000
"""How recent (in nanoseconds) a modification time may be and still not be trusted."""

MAX_CACHE_BYTES = 8 << 20
"""The largest cache file read or written (8 MiB)."""

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_FLAGS |= getattr(os, "O_BINARY", 0)  # Windows: no newline translation


def cache_dir() -> str | None:
    """Where Karni's caches live, or None when ``KARNI_CACHE_DIR`` is set but empty."""
    configured = os.environ.get("KARNI_CACHE_DIR")
    if configured is not None:
        return configured or None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "karni")


# In Python, not zlib's or hashlib's: bench row `karni context` is 8.98 ms this way, 9.44 ms with
# zlib's crc32 and adler32 (1.04x against 1.12x) and 11.6 ms with hashlib.
def fnv1a(data: bytes) -> int:
    """The 64-bit FNV-1a hash of ``data``: stable across runs and interpreters."""
    digest = 0xCBF29CE484222325
    for byte in data:
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return digest


def cache_file(kind: str, key: str) -> str | None:
    """The file of the ``kind`` cache for ``key`` (``KIND-HASH.txt``); None when caching is off."""
    folder = cache_dir()
    if folder is None:
        return None
    digest = fnv1a(key.encode("utf-8", "surrogatepass"))
    return os.path.join(folder, f"{kind}-{digest:016x}.txt")


def trust_horizon() -> int:
    """The time (ns since the epoch) from which on a modification time is too recent to trust."""
    return time.time_ns() - RACY_NS


def read_cache(path: str, tag: str, max_bytes: int = MAX_CACHE_BYTES) -> str | None:
    """The body of the cache file at ``path`` written with format ``tag``; None when unusable.

    Unusable is: missing, a link, not a regular file, larger than
    ``max_bytes``, another format, incomplete, not UTF-8, or unreadable.
    """
    try:
        fd = os.open(path, _FLAGS)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        data = os.read(fd, info.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)
    header, newline, body = data.partition(b"\n")
    if not newline or header != _header(tag, len(body)):
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def write_cache(path: str, tag: str, body: str, max_bytes: int = MAX_CACHE_BYTES) -> bool:
    """Replace the cache file at ``path`` with ``body`` in format ``tag``; True when written.

    The file is written atomically and owner-only, never through a link; a
    folder that cannot be created or written, a full disk or a body larger
    than ``max_bytes`` leaves the cache as it was.
    """
    try:
        encoded = body.encode("utf-8")
    except UnicodeError:
        return False
    payload = _header(tag, len(encoded)) + b"\n" + encoded
    if len(payload) > max_bytes:
        return False
    # bench row "karni context" runs without it
    from karni.agent.common.files import make_folders, write_atomic

    try:
        make_folders(os.path.dirname(os.path.abspath(path)), mode=0o700)  # owner-only
        write_atomic(path, payload, durable=False, mode=0o600)
    except (OSError, ValueError):
        return False
    return True


def _header(tag: str, length: int) -> bytes:
    """The first line of a cache file: its format and the byte length of its body."""
    return f"{tag}\t{length}".encode()
