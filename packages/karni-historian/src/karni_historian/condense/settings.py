"""The ``[historian]`` settings of a project, read and checked once.

Settings come from the ``[historian]`` table of ``.karni/config.toml`` (the
project) over ``$XDG_CONFIG_HOME/karni/config.toml`` (the user), read through
karni-core's one configuration reader, and checked against the declarations
of :mod:`karni_historian.declared_settings` (the rules ``karni check`` applies
too); ``docs/reference/configuration.md`` lists the keys and their ranges.
Every bad value is a :class:`~karni_historian.errors.ConfigurationError`
naming the file and the key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from karni.agent.common.config import PROJECT, USER, config_layers
from karni.agent.common.errors import ConfigFileError
from karni.agent.common.settings_registry import table_of
from karni.agent.common.settings_table import validate_layers

from karni_historian.budget import historian_chunk_tokens, history_budget_tokens
from karni_historian.declared_settings import SETTINGS
from karni_historian.errors import ConfigurationError
from karni_historian.templates import resolve_templates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from karni.agent.common.config import ConfigLayer

__all__ = ["Settings", "check_layers", "load_settings", "read_layers"]


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
        return history_budget_tokens(
            self.context_limit, self.execute_threshold_percentage, self.history_budget_percentage
        )

    @property
    def chunk_tokens(self) -> int:
        """The chunk budget of one historian run (``docs/historian/budgets.md``)."""
        return historian_chunk_tokens(self.historian_context)


_CHECKED_ROOTS = ("historian", "profile", "profiles")
_GENERAL_KEYS = (
    "context_limit",
    "execute_threshold_percentage",
    "history_budget_percentage",
    "historian_context",
    "temporal_awareness",
)


def check_layers(layers: Sequence[ConfigLayer]) -> None:
    """Check the historian's part of both files against its declared settings.

    The rules are those of :mod:`karni_historian.declared_settings`, the same
    ``karni check`` applies: every key known, of its type and in its range.

    Raises:
        ConfigurationError: The first problem, naming the file and the key.
    """
    problems = validate_layers(table_of(SETTINGS), layers, roots=_CHECKED_ROOTS)
    if problems:
        raise ConfigurationError(str(problems[0]))


def read_layers(root: str | os.PathLike[str]) -> list[ConfigLayer]:
    """The project's and the user's configuration (the project's first), checked.

    Raises:
        ConfigurationError: A file cannot be read, is not TOML, or holds a bad setting.
    """
    try:
        layers = config_layers(root)
    except ConfigFileError as error:
        raise ConfigurationError(str(error)) from None
    check_layers(layers)
    return layers


def _historian_table(layer: ConfigLayer) -> dict[str, Any]:
    table = layer.data.get("historian", {})
    return table if isinstance(table, dict) else {}


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
    layers = {layer.scope: layer for layer in read_layers(root)}
    user, project = layers[USER], layers[PROJECT]
    values: dict[str, Any] = {}
    for layer in (user, project):
        table = _historian_table(layer)
        values.update({key: table[key] for key in _GENERAL_KEYS if key in table})
    templates = resolve_templates(
        None,
        _historian_table(user).get("expand_tools"),
        _historian_table(project).get("expand_tools"),
        user_source=user.path,
        project_source=project.path,
    )
    return Settings(expand_tools=templates, **values)
