"""Which historian models a session uses: the harness blocks, profiles and defaults.

The ``[historian]`` table of the user's ``karni/config.toml`` and the project's
``.karni/config.toml`` holds one block per harness (``claude_code``,
``opencode``, ``pi``, ``omp``, ``codex``, ``gemini``, ``aider``) with
``model``, ``fallback_models`` and ``two_pass``; a user profile
(``[profiles.NAME.historian…]``, selected by ``profile = "NAME"``) sits
between the two, and the project wins over both.
:func:`resolve_chain` turns that into the :class:`ResolvedChain` of one
harness, with where each setting came from; every block of every file is
checked first, against the declarations of :mod:`karni_historian.declared_settings`
(the rules ``karni check`` applies too), so a wrong key is reported whichever
harness runs. See ``docs/how-to/historian-model.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from karni.agent.common.config import (
    PROJECT,
    USER,
    ConfigLayer,
    project_config_path,
    read_config,
    user_config_path,
)
from karni.agent.common.errors import ConfigFileError
from karni.agent.common.settings_table import PROFILES_KEY, selected_profile

from karni_historian.condense.models.entries import EXTRACTIVE_ID, ModelEntry
from karni_historian.condense.settings import check_layers
from karni_historian.declared_settings import HARNESSES
from karni_historian.errors import ConfigurationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from karni.agent.common.config import ConfigLayer

__all__ = [
    "HARNESSES",
    "ConfigFiles",
    "ResolvedChain",
    "harness_of_source",
    "resolve_chain",
    "validate_config",
]

_SOURCES = {
    "claude-code": "claude_code",
    "opencode": "opencode",
    "pi": "pi",
    "omp": "omp",
    "codex": "codex",
    "gemini": "gemini",
    "aider": "aider",
}
_SESSION_BACKENDS = {"anthropic": "anthropic", "openai": "openai"}


def harness_of_source(source: str) -> str | None:
    """The harness block for a session's transcript source, None when it has none."""
    return _SOURCES.get(source)


@dataclass(slots=True)
class ConfigFiles:
    """The two configuration files and their parsed contents.

    Attributes:
        user_path: ``$XDG_CONFIG_HOME/karni/config.toml`` (or ``~/.config/…``).
        project_path: ``<root>/.karni/config.toml``.
        user: The user file's contents (empty when it does not exist).
        project: The project file's contents.
    """

    user_path: str
    project_path: str
    user: dict[str, Any] = field(default_factory=dict)
    project: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, root: str | os.PathLike[str]) -> ConfigFiles:
        """Read both files of the project at ``root`` through karni-core's reader.

        Raises:
            ConfigurationError: A file cannot be read or is not TOML.
        """
        files = cls(user_config_path(), project_config_path(os.fspath(root)))
        try:
            files.user = read_config(files.user_path)
            files.project = read_config(files.project_path)
        except ConfigFileError as error:
            raise ConfigurationError(str(error)) from None
        return files

    def layers(self) -> list[ConfigLayer]:
        """The two files as karni-core's layers, the project's first."""
        return [
            ConfigLayer(PROJECT, self.project_path, self.project),
            ConfigLayer(USER, self.user_path, self.user),
        ]


@dataclass(frozen=True, slots=True)
class ResolvedChain:
    """The historian one harness uses, resolved from configuration.

    Attributes:
        harness: The harness block (``claude_code``, ``opencode``, ``pi``,
            ``omp``, ``codex``, ``gemini``, ``aider``), or None for a source
            without one.
        entries: The models, in order: the model, then its fallbacks.
        two_pass: Whether the editor pass runs after a valid draft.
        disabled: ``historian.disable = true``: no historian runs.
        origins: Where each setting came from (``project``, ``user``,
            ``profile NAME``, ``session`` or ``default``).
        note: Why the default was chosen, when it was.
    """

    harness: str | None
    entries: tuple[ModelEntry, ...]
    two_pass: bool = False
    disabled: bool = False
    origins: Mapping[str, str] = field(default_factory=dict)
    note: str = ""

    @property
    def is_extractive(self) -> bool:
        """True when only the built-in ``local/extractive`` historian runs."""
        return all(entry.model_id == EXTRACTIVE_ID for entry in self.entries)

    @property
    def name(self) -> str:
        """The chain as run records and messages name it: its model ids."""
        return " → ".join(entry.model_id for entry in self.entries) or "disabled"


# --- layers -------------------------------------------------------------------------------


Layer = tuple[str, "Mapping[str, Any]"]


def _layers(files: ConfigFiles) -> list[Layer]:
    """The checked ``[historian]`` tables, lowest priority first, as (origin, table)."""
    layers = files.layers()
    check_layers(layers)  # the rules of karni_historian/declared_settings.py
    result: list[Layer] = [("user", _historian(files.user))]
    name, _ = selected_profile(layers)
    if name is not None:
        result.append((f"profile {name}", _historian(files.user[PROFILES_KEY][name])))
    result.append(("project", _historian(files.project)))
    return result


def _historian(document: Mapping[str, Any]) -> Mapping[str, Any]:
    table = document.get("historian", {})
    return table if isinstance(table, dict) else {}


# --- reading checked values ---------------------------------------------------------------

_REASONING = ("variant", "thinking_level")


def _entry_arguments(table: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """A checked entry table's ModelEntry keyword arguments (``model_id`` empty when unset)."""
    arguments = dict(defaults)
    for key, value in table.items():
        if key in _REASONING:
            arguments["reasoning"] = value
        elif key == "base_url":
            arguments[key] = value.rstrip("/")
        elif key in ("max_tokens", "context_window"):
            arguments[key] = int(value)
        elif key in ("temperature", "timeout"):
            arguments[key] = float(value)
        elif key != "model":
            arguments[key] = value
    model = table.get("model", "")
    arguments["model_id"] = model if model.strip() else ""
    return arguments


def _entry(value: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """A checked entry (a model id or a table) as ModelEntry keyword arguments."""
    if isinstance(value, str):
        return {**defaults, "model_id": value} if value.strip() else {"model_id": ""}
    return _entry_arguments(value, defaults)


def _block(block: Mapping[str, Any]) -> dict[str, Any]:
    """A checked harness block: its model and fallbacks as argument dicts, and ``two_pass``."""
    levels = [block[key] for key in _REASONING if key in block]  # one at most, once checked
    defaults = {"reasoning": levels[0]} if levels else {}
    result: dict[str, Any] = {}
    if "model" in block:
        result["model"] = _entry(block["model"], defaults)
    if "fallback_models" in block:
        value = block["fallback_models"]
        items = [value] if isinstance(value, str | dict) else value
        result["fallback_models"] = [_entry(item, defaults) for item in items]
    if "two_pass" in block:
        result["two_pass"] = block["two_pass"]
    return result


def _checked_layers(layers: list[Layer]) -> list[tuple[str, dict[str, Any]]]:
    """Every layer as (origin, {harness: block settings, "disable": bool})."""
    checked = []
    for origin, table in layers:
        result: dict[str, Any] = {h: _block(table[h]) for h in HARNESSES if h in table}
        if "disable" in table:
            result["disable"] = table["disable"]
        checked.append((origin, result))
    return checked


def validate_config(files: ConfigFiles) -> None:
    """Check every historian setting of both files without calling anything.

    Raises:
        ConfigurationError: The first problem, naming the file and the key.
    """
    _layers(files)


# --- resolving ----------------------------------------------------------------------------


def _merged(checked: list[tuple[str, dict[str, Any]]], harness: str) -> dict[str, tuple[str, Any]]:
    """The harness block's settings, key by key from the highest layer that sets each."""
    merged: dict[str, tuple[str, Any]] = {}
    for origin, result in checked:
        for key, value in result.get(harness, {}).items():
            merged[key] = (origin, value)
    return merged


def _block_present(checked: list[tuple[str, dict[str, Any]]], harness: str) -> bool:
    return any(harness in result for _, result in checked)


def _build(arguments: Mapping[str, Any], origin: str, window: int) -> ModelEntry:
    return ModelEntry(**{"context_window": window, **arguments, "origin": origin})


def resolve_chain(
    files: ConfigFiles,
    harness: str | None,
    *,
    session_model: str | None = None,
    default_window: int = 128_000,
) -> ResolvedChain:
    """The historian for sessions of ``harness``.

    Args:
        files: The configuration files.
        harness: The session's harness block, None for a source without one.
        session_model: For OpenCode sessions, the session's own model as the
            transcript records it (``providerID/modelID``), inherited when no
            model is configured and its credentials are in the environment.
        default_window: The context window of entries that set none (the
            ``historian_context`` setting).

    Raises:
        ConfigurationError: A setting is wrong (every block of every file is
            checked), naming the key and the file.
    """
    checked = _checked_layers(_layers(files))  # raises ConfigurationError
    disable = [(origin, r["disable"]) for origin, r in checked if "disable" in r]
    if disable and disable[-1][1]:
        return ResolvedChain(harness, (), disabled=True, origins={"disable": disable[-1][0]})
    block = harness
    if harness == "omp" and not _block_present(checked, "omp"):
        block = "pi"  # an OMP session uses [historian.pi] only when it has no block of its own
    merged = _merged(checked, block) if block else {}
    _, model = merged.get("model", ("default", {"model_id": ""}))
    if model["model_id"]:
        return _configured(harness, merged, default_window)
    return _unconfigured(harness, session_model, default_window)


def _configured(
    harness: str | None, merged: Mapping[str, tuple[str, Any]], window: int
) -> ResolvedChain:
    origin, model = merged["model"]
    entries = [_build(model, origin, window)]
    fallback_origin, fallbacks = merged.get("fallback_models", ("default", []))
    for arguments in fallbacks:
        entry = _build(arguments, fallback_origin, window)
        if all(entry.model_id != seen.model_id for seen in entries):
            entries.append(entry)
    two_pass_origin, two_pass = merged.get("two_pass", ("default", False))
    origins = {"model": origin, "fallback_models": fallback_origin, "two_pass": two_pass_origin}
    return ResolvedChain(harness, tuple(entries), two_pass=two_pass, origins=origins)


def _unconfigured(harness: str | None, session_model: str | None, window: int) -> ResolvedChain:
    extractive = (ModelEntry(model_id=EXTRACTIVE_ID, context_window=window),)
    origins = {"model": "default"}
    if harness != "opencode":
        return ResolvedChain(harness, extractive, origins=origins, note="no model is configured")
    if not session_model:
        note = "no model is configured and the transcript records no session model"
        return ResolvedChain(harness, extractive, origins=origins, note=note)
    provider, _, name = session_model.partition("/")
    backend = _SESSION_BACKENDS.get(provider)
    if backend is None or not name:
        note = f"the session's model {session_model} cannot be reached from Karni"
        return ResolvedChain(harness, extractive, origins=origins, note=note)
    entry = ModelEntry(model_id=f"{backend}/{name}", context_window=window, origin="session")
    if not os.environ.get(entry.key_variable or ""):
        note = f"the session's model {session_model} has no `{entry.key_variable}` set"
        return ResolvedChain(harness, extractive, origins=origins, note=note)
    return ResolvedChain(harness, (entry,), origins={"model": "session"})
