"""The historian's SQLite store: one database per project, never committed.

The database lives at ``.karni/local/historian.db``; ``docs/historian/store.md``
describes its folder, file modes, tables and migrations. The modules of this
package each own one group of tables; :class:`Store` puts them together.
"""

from __future__ import annotations

from karni_historian.errors import StoreError
from karni_historian.store.codec import part_to_dict, parts_from_json, parts_to_json
from karni_historian.store.memory import normalize_fact
from karni_historian.store.records import CursorState, RunRecord, SessionInfo, StoredCompartment
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
