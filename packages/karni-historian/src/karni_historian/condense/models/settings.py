"""Which historian models a session uses: the harness blocks, profiles and defaults.

The ``[historian]`` table of the user's ``karni/config.toml`` and the project's
``.karni/config.toml`` holds one block per harness (``claude_code``,
``opencode``, ``pi``, ``omp``) with ``model``, ``fallback_models`` and
``two_pass``; a user profile (``[profiles.NAME.historian…]``, selected by
``profile = "NAME"``) sits between the two, and the project wins over both.
:func:`resolve_chain` turns that into the :class:`ResolvedChain` of one
harness, with where each setting came from; every block of every file is
checked, so a wrong key is reported whichever harness runs. The rules are
spelled out in ``docs/historian-models.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from karni_historian.condense.models.entries import (
    EXTRACTIVE_ID,
    REASONING_LEVELS,
    ModelEntry,
    split_model_id,
)
from karni_historian.errors import ConfigurationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = [
    "HARNESSES",
    "MODEL_KEYS",
    "ConfigFiles",
    "ResolvedChain",
    "harness_of_source",
    "resolve_chain",
    "validate_config",
]

HARNESSES = ("claude_code", "opencode", "pi", "omp")
"""The harness blocks of ``[historian]``."""

MODEL_KEYS = frozenset({*HARNESSES, "disable"})
"""The ``[historian]`` keys this module owns."""

_SOURCES = {"claude-code": "claude_code", "opencode": "opencode", "pi": "pi", "omp": "omp"}
_BLOCK_KEYS = frozenset({"model", "fallback_models", "two_pass"})
_ENTRY_KEYS = frozenset(
    {"model", "base_url", "api_key_env", "max_tokens", "temperature", "timeout", "context_window"}
)
_REASONING_KEY = {
    "claude_code": None,
    "opencode": "variant",
    "pi": "thinking_level",
    "omp": "thinking_level",
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
        from karni.agent.common.config import project_config_path, read_config, user_config_path
        from karni.agent.common.errors import ConfigFileError

        files = cls(user_config_path(), project_config_path(os.fspath(root)))
        try:
            files.user = read_config(files.user_path)
            files.project = read_config(files.project_path)
        except ConfigFileError as error:
            raise ConfigurationError(str(error)) from None
        return files


@dataclass(frozen=True, slots=True)
class ResolvedChain:
    """The historian one harness uses, resolved from configuration.

    Attributes:
        harness: The harness block (``claude_code``, ``opencode``, ``pi``,
            ``omp``), or None for a source without one.
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


Layer = tuple[str, str, str, "Mapping[str, Any]"]


def _layers(files: ConfigFiles) -> list[Layer]:
    """The ``[historian]`` tables, lowest priority first, as (origin, file, key, table)."""
    if "profiles" in files.project:
        raise ConfigurationError(
            f"`profiles` in {files.project_path}: a project cannot define a profile; "
            f'define it in {files.user_path} and select it with `profile = "NAME"`'
        )
    user = _historian(files.user, files.user_path, "historian")
    layers: list[Layer] = [("user", files.user_path, "historian", user)]
    name, where = _selected_profile(files)
    if name is not None:
        profiles = files.user.get("profiles")
        profile = profiles.get(name) if isinstance(profiles, dict) else None
        if not isinstance(profile, dict):
            raise ConfigurationError(
                f"`profile = {name!r}` in {where}: {files.user_path} defines no "
                f"[profiles.{name}]; add it there or remove `profile`"
            )
        key = f"profiles.{name}.historian"
        table = _historian(profile, files.user_path, key)
        layers.append((f"profile {name}", files.user_path, key, table))
    project = _historian(files.project, files.project_path, "historian")
    layers.append(("project", files.project_path, "historian", project))
    return layers


def _selected_profile(files: ConfigFiles) -> tuple[str | None, str]:
    for document, path in ((files.project, files.project_path), (files.user, files.user_path)):
        if "profile" in document:
            name = document["profile"]
            if not isinstance(name, str) or not name:
                raise ConfigurationError(f"`profile` in {path} must be a profile name (a string)")
            return name, path
    return None, ""


def _historian(document: Mapping[str, Any], path: str, key: str) -> Mapping[str, Any]:
    table = document.get("historian", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"`{key}` in {path} must be a table; write [{key}]")
    return table


# --- checking -----------------------------------------------------------------------------


def _number(value: Any, where: str, low: float, high: float, *, integer: bool) -> float:
    kinds = int if integer else int | float
    if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
        what = "a whole number" if integer else "a number"
        raise ConfigurationError(f"{where} must be {what} from {low:g} to {high:g}")
    return value


def _entry_settings(table: Mapping[str, Any], where: str, harness: str) -> dict[str, Any]:
    """Check an entry table's keys and values; return ModelEntry keyword arguments."""
    reasoning_key = _REASONING_KEY[harness]
    settings: dict[str, Any] = {}
    for key, value in table.items():
        at = f"`{where}.{key}`"
        if key == "model":
            continue
        if key in ("variant", "thinking_level"):
            settings["reasoning"] = _reasoning(key, value, where, harness)
        elif key == "base_url":
            if not isinstance(value, str) or not value.startswith(("http://", "https://")):
                raise ConfigurationError(f"{at} must be an http:// or https:// URL")
            settings["base_url"] = value.rstrip("/")
        elif key == "api_key_env":
            if not isinstance(value, str) or not value.isidentifier():
                raise ConfigurationError(f"{at} must name an environment variable")
            settings["api_key_env"] = value
        elif key == "max_tokens":
            settings[key] = int(_number(value, at, 1, 1_000_000, integer=True))
        elif key == "temperature":
            settings[key] = float(_number(value, at, 0, 2, integer=False))
        elif key == "timeout":
            settings[key] = float(_number(value, at, 1, 86_400, integer=False))
        elif key == "context_window":
            settings[key] = int(_number(value, at, 1_000, 100_000_000, integer=True))
        else:
            known = sorted(_ENTRY_KEYS | ({reasoning_key} if reasoning_key else set()))
            raise ConfigurationError(f"unknown key {at}; known: {', '.join(known)}")
    return settings


def _reasoning(key: str, value: Any, where: str, harness: str) -> str:
    allowed = _REASONING_KEY[harness]
    if key != allowed:
        takes = f"take `{allowed}`" if allowed else "take neither `variant` nor `thinking_level`"
        only = "OpenCode" if key == "variant" else "Pi and OMP"
        raise ConfigurationError(
            f"`{where}.{key}`: {harness} entries {takes}; only {only} entries take `{key}`"
        )
    if value not in REASONING_LEVELS:
        raise ConfigurationError(f"`{where}.{key}` must be one of {', '.join(REASONING_LEVELS)}")
    return str(value)


def _model_id(value: Any, where: str, settings: Mapping[str, Any]) -> str:
    if not isinstance(value, str):
        raise ConfigurationError(f"`{where}` must be a model id such as `anthropic/MODEL`")
    parts = split_model_id(value)
    if parts is None:
        raise ConfigurationError(
            f"`{where}` = {value!r} is not `backend/model`; backends: anthropic, openai, "
            f"openai-compatible, ollama, claude-code, local"
        )
    if parts[0] == "openai-compatible" and not settings.get("base_url"):
        raise ConfigurationError(f"`{where}` = {value!r} needs a `base_url` in the same entry")
    if parts[0] == "local" and value != EXTRACTIVE_ID:
        raise ConfigurationError(f"`{where}` = {value!r}: the only local model is {EXTRACTIVE_ID}")
    return value


def _entry(value: Any, where: str, harness: str, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """An entry (string or table) as ModelEntry arguments; ``model_id`` empty when unset."""
    if isinstance(value, str):
        if not value.strip():
            return {"model_id": ""}
        return {**defaults, "model_id": _model_id(value, where, {})}
    if not isinstance(value, dict):
        raise ConfigurationError(f"`{where}` must be a model id or a table with `model`")
    settings = {**defaults, **_entry_settings(value, where, harness)}
    model = value.get("model", "")
    if isinstance(model, str) and not model.strip():
        return {**settings, "model_id": ""}
    return {**settings, "model_id": _model_id(model, f"{where}.model", settings)}


def _check_block(block: Any, where: str, harness: str) -> dict[str, Any]:
    """Check one harness block; return its settings with entries as argument dicts."""
    if not isinstance(block, dict):
        raise ConfigurationError(f"`{where}` must be a table; write [{where}]")
    reasoning_key = _REASONING_KEY[harness]
    defaults: dict[str, Any] = {}
    for key, value in block.items():
        if key in ("variant", "thinking_level"):
            defaults["reasoning"] = _reasoning(key, value, where, harness)
        elif key not in _BLOCK_KEYS:
            known = sorted(_BLOCK_KEYS | ({reasoning_key} if reasoning_key else set()))
            raise ConfigurationError(f"unknown key `{where}.{key}`; known: {', '.join(known)}")
    checked: dict[str, Any] = {}
    if "model" in block:
        checked["model"] = _entry(block["model"], f"{where}.model", harness, defaults)
    if "fallback_models" in block:
        checked["fallback_models"] = _fallbacks(block["fallback_models"], where, harness, defaults)
    if "two_pass" in block:
        if not isinstance(block["two_pass"], bool):
            raise ConfigurationError(f"`{where}.two_pass` must be true or false")
        checked["two_pass"] = block["two_pass"]
    return checked


def _fallbacks(value: Any, where: str, harness: str, defaults: Mapping[str, Any]) -> list[Any]:
    items = [value] if isinstance(value, str | dict) else value
    if not isinstance(items, list):
        raise ConfigurationError(f"`{where}.fallback_models` must be a list of models")
    entries = []
    for number, item in enumerate(items, 1):
        entry = _entry(item, f"{where}.fallback_models[{number}]", harness, defaults)
        if not entry["model_id"]:
            raise ConfigurationError(f"`{where}.fallback_models[{number}]` has no model")
        entries.append(entry)
    return entries


def _checked_layers(layers: list[Layer]) -> list[tuple[str, dict[str, Any]]]:
    """Every layer checked: (origin, {harness: block settings, "disable": bool})."""
    checked = []
    for origin, path, prefix, table in layers:
        result: dict[str, Any] = {}
        for harness in HARNESSES:
            if harness in table:
                try:
                    result[harness] = _check_block(table[harness], f"{prefix}.{harness}", harness)
                except ConfigurationError as error:
                    raise ConfigurationError(f"{error} (in {path})") from None
        if "disable" in table:
            if not isinstance(table["disable"], bool):
                raise ConfigurationError(f"`{prefix}.disable` in {path} must be true or false")
            result["disable"] = table["disable"]
        checked.append((origin, result))
    return checked


def validate_config(files: ConfigFiles) -> None:
    """Check every historian model setting of both files without calling anything.

    Raises:
        ConfigurationError: The first problem, naming the key and the file.
    """
    _checked_layers(_layers(files))


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
    checked = _checked_layers(_layers(files))
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
