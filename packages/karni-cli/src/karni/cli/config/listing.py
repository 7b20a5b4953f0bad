"""``karni config list``: every setting that is set or has a default, and where it came from.

Declared settings come first, in declaration order (karni-core's, then each
package's by name), then keys the files set under a wildcard
(``historian.expand_tools.Bash``, ``profiles.NAME.…``). A setting with no
default that no file sets is left out; keys no package declares are
``karni check``'s to report. The ``--json`` shape is documented in
:mod:`karni.cli.commands.config`.
"""

from __future__ import annotations

import json
import sys

from karni.agent.common.settings import toml_literal
from karni.cli.config.settings import declared, read_layers, resolve_in_layers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from karni.agent.common.settings_table import SettingsTable

__all__ = ["print_list", "rows", "set_keys"]


def set_keys(table: SettingsTable, data: Mapping[str, object], prefix: str = "") -> Iterator[str]:
    """Every declared key ``data`` sets, wildcards filled in."""
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        if table.find(key) is not None:
            yield key
        elif isinstance(value, dict):
            yield from set_keys(table, value, key)


def rows(root: str | None, *, global_only: bool) -> list[dict[str, object]]:
    """The listed settings as the ``--json`` rows.

    Raises:
        ConfigError: A file is invalid, or a listed value is not what its setting takes.
    """
    table = declared().table()
    layers = read_layers(root, global_only=global_only)
    keys = [setting.name for setting in table.settings if "*" not in setting.name]
    for layer in layers:
        keys += [key for key in set_keys(table, layer.data) if key not in keys]
    listed = []
    for key in keys:
        value, source, path = resolve_in_layers(key, layers, table)
        if value is None:
            continue
        setting = table.find(key)
        assert setting is not None
        listed.append(
            {
                "key": key,
                "value": value,
                "source": source,
                "path": path or None,
                "scope": setting.scope,
                "declared_by": setting.owner or None,
            }
        )
    return listed


def print_list(root: str | None, *, global_only: bool, as_json: bool) -> int:
    """Print the list, as lines or as one JSON object."""
    listed = rows(root, global_only=global_only)
    if as_json:
        sys.stdout.write(json.dumps({"settings": listed}, indent=2) + "\n")
        return 0

    for row in listed:
        where = "default" if row["path"] is None else f"{row['source']}: {row['path']}"
        sys.stdout.write(f"{row['key']} = {toml_literal(row['value'])} ({where})\n")
    return 0
