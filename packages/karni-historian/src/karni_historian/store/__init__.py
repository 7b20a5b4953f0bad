"""The historian's SQLite store: one database per project, never committed.

The database lives at ``.karni/local/historian.db``; ``docs/historian/store.md``
describes its folder, file modes, tables and migrations. The modules of this
package each own one group of tables; :class:`Store` puts them together.

The names below are the package's documented public names (the README's
``karni_historian.store.Store``), each at home in the module ``_HOMES`` names.
They are loaded on first use, so that the brief, which runs on the hot path
of ``karni context``, can import :mod:`karni_historian.store.briefing`
without the other table groups (``docs/performance.md``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.errors import StoreError
    from karni_historian.store.codec import part_to_dict, parts_from_json, parts_to_json
    from karni_historian.store.records import (
        CursorState,
        RunRecord,
        SessionInfo,
        StoredCompartment,
        normalize_fact,
    )
    from karni_historian.store.schema import DB_RELATIVE_PATH, MIGRATIONS, SCHEMA_VERSION, db_path
    from karni_historian.store.store import Store

__all__ = [
    "DB_RELATIVE_PATH",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "CursorState",
    "RunRecord",
    "SessionInfo",
    "Store",
    "StoreError",
    "StoredCompartment",
    "db_path",
    "normalize_fact",
    "part_to_dict",
    "parts_from_json",
    "parts_to_json",
]

_HOMES = {
    "StoreError": "karni_historian.errors",
    "part_to_dict": "karni_historian.store.codec",
    "parts_from_json": "karni_historian.store.codec",
    "parts_to_json": "karni_historian.store.codec",
    "normalize_fact": "karni_historian.store.records",
    "CursorState": "karni_historian.store.records",
    "RunRecord": "karni_historian.store.records",
    "SessionInfo": "karni_historian.store.records",
    "StoredCompartment": "karni_historian.store.records",
    "DB_RELATIVE_PATH": "karni_historian.store.schema",
    "MIGRATIONS": "karni_historian.store.schema",
    "SCHEMA_VERSION": "karni_historian.store.schema",
    "db_path": "karni_historian.store.schema",
    "Store": "karni_historian.store.store",
}


def __getattr__(name: str) -> object:
    """Load a public name from the module that defines it, on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'karni_historian.store' has no attribute {name!r}")
    value = getattr(__import__(home, fromlist=[name]), name)
    globals()[name] = value
    return value
