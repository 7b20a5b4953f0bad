"""The ``[historian]`` settings of a project, read and checked once.

Settings come from the ``[historian]`` table of ``.karni/config.toml`` (the
project) over ``$XDG_CONFIG_HOME/karni/config.toml`` (the user), read through
karni-core's one configuration reader; see ``docs/historian/configuration.md``
for the keys and their ranges. Every bad value is a
:class:`~karni_historian.errors.ConfigurationError` naming the key and the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from karni_historian.errors import ConfigurationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["Settings", "load_settings"]

_NUMBER_KEYS = {
    "context_limit": (1_000, 100_000_000),
    "execute_threshold_percentage": (20, 90),
    "historian_context": (1_000, 100_000_000),
}
_KNOWN_KEYS = (
    "context_limit, execute_threshold_percentage, history_budget_percentage, "
    "historian_context, temporal_awareness, expand_tools"
)


@dataclass(slots=True, kw_only=True)
class Settings:
    """The historian settings a project resolves to (``docs/historian/configuration.md``).

    Attributes:
        context_limit: The model's context window, in tokens.
        execute_threshold_percentage: The share of the window in use before
            compaction, 20–90.
        history_budget_percentage: The share of the usable window for the
            history block, 0.05–0.5.
        historian_context: The historian's window; a chunk is a quarter of it.
        temporal_awareness: Date attributes on rendered compartments.
        expand_tools: The resolved ``expand_tools`` templates; None for the
            built-ins.
    """

    context_limit: int = 200_000
    execute_threshold_percentage: float = 65.0
    history_budget_percentage: float = 0.15
    historian_context: int = 128_000
    temporal_awareness: bool = True
    expand_tools: Mapping[str, str] | None = None

    @property
    def history_budget(self) -> int:
        """The ``<session-history>`` budget in tokens, the one ``render`` and ``status`` use."""
        from karni_historian.brief.budget import history_budget_tokens

        return history_budget_tokens(
            self.context_limit, self.execute_threshold_percentage, self.history_budget_percentage
        )

    @property
    def chunk_tokens(self) -> int:
        """The chunk budget of one historian run (``docs/historian/budgets.md``)."""
        from karni_historian.brief.budget import historian_chunk_tokens

        return historian_chunk_tokens(self.historian_context)


def _historian_tables(root: str | os.PathLike[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The ``[historian]`` table of the user and the project file, with each file's path."""
    from karni.agent.common.config import config_layers, table
    from karni.agent.common.errors import ConfigFileError

    try:
        return {
            layer.scope: (layer.path, table(layer, "historian")) for layer in config_layers(root)
        }
    except ConfigFileError as error:
        raise ConfigurationError(str(error)) from None


def _number(value: object, message: str) -> float:
    """``value`` as a number, or a :class:`ConfigurationError` with ``message``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(message)
    return value


def _check_value(key: str, value: object, path: str) -> None:
    """Raise :class:`ConfigurationError` unless ``value`` is valid for ``key``."""
    from karni_historian.brief.budget import check_history_budget_percentage

    where = f"`historian.{key}` in {path}"
    if key in _NUMBER_KEYS:
        low, high = _NUMBER_KEYS[key]
        number = _number(value, f"{where} must be a number between {low} and {high}")
        if not low <= number <= high:
            raise ConfigurationError(f"{where} must be between {low} and {high} (got {value!r})")
    elif key == "history_budget_percentage":
        number = _number(value, f"{where} must be a number between 0.05 and 0.5")
        try:
            check_history_budget_percentage(number)
        except ConfigurationError as error:
            raise ConfigurationError(f"{error} ({path})") from None
    elif key == "temporal_awareness":
        if not isinstance(value, bool):
            raise ConfigurationError(f"{where} must be true or false")
    else:
        raise ConfigurationError(f"unknown setting {where}; remove it (known: {_KNOWN_KEYS})")


def load_settings(root: str | os.PathLike[str]) -> Settings:
    """Read the ``[historian]`` settings of the user and project configuration.

    Keys: ``context_limit`` (tokens, default 200000), ``execute_threshold_percentage``
    (20–90, default 65), ``history_budget_percentage`` (0.05–0.5, default 0.15),
    ``historian_context`` (tokens, default 128000), ``temporal_awareness``
    (default true) and ``expand_tools`` (tool name → template or false, merged
    per key: built-ins, then user, then project).

    Raises:
        karni_historian.errors.ConfigurationError: A value is malformed or out
            of range; the message names the key and the file.
    """
    from karni.agent.common.config import PROJECT, USER

    from karni_historian.condense.templates import resolve_templates

    tables = _historian_tables(root)
    user_path, user = tables[USER]
    project_path, project = tables[PROJECT]
    values: dict[str, Any] = {}
    for path, table in ((user_path, user), (project_path, project)):
        for key, value in table.items():
            if key != "expand_tools":
                _check_value(key, value, path)
                values[key] = value
    templates = resolve_templates(
        None,
        user.get("expand_tools"),
        project.get("expand_tools"),
        user_source=user_path,
        project_source=project_path,
    )
    return Settings(expand_tools=templates, **values)
