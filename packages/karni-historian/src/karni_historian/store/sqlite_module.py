"""SQLite for the store, loaded at the least cost a brief before every edit can pay.

``import sqlite3`` costs about as much as starting Python itself, and little of
that is SQLite (``docs/performance.md``):

- the ``sqlite3`` package adds date and time adapters, importing
  :mod:`datetime`, which a store of text never uses, so the C module
  ``_sqlite3`` is used directly (``sqlite3`` when it is missing);
- ``_sqlite3`` itself imports :mod:`functools` (and with it
  :mod:`collections`) for one thing, ``lru_cache``, which wraps each
  connection's statement cache. When nothing has imported :mod:`functools`
  yet, ``_sqlite3`` is loaded with :func:`statement_cache` in its place, a
  bounded cache of prepared statements. Any failure falls back to the
  ordinary import.

The module objects are the same in every case (``sqlite3.Error`` is
``_sqlite3.Error``), so code that imports ``sqlite3`` elsewhere agrees.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

__all__ = ["load", "statement_cache"]


def statement_cache(
    maxsize: int = 128, typed: bool = False
) -> Callable[[Callable[[str], object]], Callable[[str], object]]:
    """What ``_sqlite3`` asks of ``functools.lru_cache``: a bounded cache of one-argument calls.

    When full it starts again empty: a connection of the store prepares a
    few dozen statements, far fewer than the bound.
    """

    def decorate(prepare: Callable[[str], object]) -> Callable[[str], object]:
        if maxsize is not None and maxsize <= 0:
            return prepare
        prepared: dict[str, object] = {}

        def cached(sql: str) -> object:
            statement = prepared.get(sql)
            if statement is None:
                if maxsize is not None and len(prepared) >= maxsize:
                    prepared.clear()
                statement = prepared[sql] = prepare(sql)
            return statement

        return cached

    return decorate


def load() -> ModuleType:
    """The SQLite module: ``_sqlite3`` (loaded as above) or, failing that, ``sqlite3``."""
    module = sys.modules.get("_sqlite3")
    if module is not None:
        return module
    if "functools" not in sys.modules:
        stand_in = type(sys)("functools")
        stand_in.lru_cache = statement_cache  # type: ignore[attr-defined]
        sys.modules["functools"] = stand_in
        try:
            import _sqlite3

            return _sqlite3
        except Exception:  # an interpreter whose _sqlite3 wants more: load it as usual
            pass
        finally:
            if sys.modules.get("functools") is stand_in:
                del sys.modules["functools"]
    try:
        import _sqlite3

        return _sqlite3
    except ImportError:
        import sqlite3

        return sqlite3
