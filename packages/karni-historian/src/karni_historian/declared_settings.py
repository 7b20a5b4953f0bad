"""Every ``[historian]`` setting, declared once: for the historian, ``karni config`` and check.

Named by karni-historian's ``karni.settings`` entry point. The historian's own
loaders (:mod:`karni_historian.condense.settings` and
:mod:`karni_historian.condense.models.settings`) check the files against these
same declarations, so ``karni check`` and the historian agree on every key.
The page listing them is generated: ``docs/reference/configuration.md``.

Nothing here imports more than karni-core's declaration types, so loading it
is cheap.
"""

from __future__ import annotations

from karni.agent.common.settings import (
    PROJECT,
    USER,
    AnyOf,
    Boolean,
    Field,
    Forbidden,
    Integer,
    Kind,
    ListOf,
    Number,
    Setting,
    Table,
    Text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "BACKEND_NAMES",
    "EXTRACTIVE_ID",
    "HARNESSES",
    "REASONING_KEYS",
    "REASONING_LEVELS",
    "SETTINGS",
    "model_id_problem",
]

HARNESSES = ("claude_code", "opencode", "pi", "omp", "codex", "gemini", "aider")
"""The harness blocks of ``[historian]``."""

BACKEND_NAMES = ("anthropic", "openai", "openai-compatible", "ollama", "claude-code", "local")
"""The part of a model id before the ``/``."""

EXTRACTIVE_ID = "local/extractive"
"""The built-in, model-free historian."""

REASONING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""Values of ``thinking_level`` (Pi, OMP) and ``variant`` (OpenCode)."""

REASONING_KEYS: dict[str, str | None] = {
    "claude_code": None,
    "opencode": "variant",
    "pi": "thinking_level",
    "omp": "thinking_level",
    "codex": None,
    "gemini": None,
    "aider": None,
}
"""The reasoning key each harness's entries may set."""

_NAMES = {
    "claude_code": "Claude Code",
    "opencode": "OpenCode",
    "pi": "Pi",
    "omp": "OMP",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "aider": "Aider",
}


def model_id_problem(value: str) -> str | None:
    """What is wrong with a model id (``backend/model``); None when it is one, or empty."""
    if not value.strip():
        return None  # an empty model configures nothing
    backend, slash, name = value.partition("/")
    if not slash or backend not in BACKEND_NAMES or not name.strip():
        return f"is not `backend/model`; backends: {', '.join(BACKEND_NAMES)}"
    if name.startswith("-") or any(c.isspace() or not c.isprintable() for c in name):
        return "is not a model name: it may not start with `-` or hold spaces"
    if backend == "local" and value != EXTRACTIVE_ID:
        return f"is not a model: the only local model is {EXTRACTIVE_ID}"
    return None


def _string_entry_problem(value: str) -> str | None:
    problem = model_id_problem(value)
    if problem is None and value.startswith("openai-compatible/"):
        return (
            'needs a `base_url`: write it as a table, {model = "...", base_url = "http://..."}, '
            "in your user configuration"
        )
    return problem


def _fallback_problem(value: str) -> str | None:
    return "has no model" if not value.strip() else _string_entry_problem(value)


def _url_problem(value: str) -> str | None:
    return (
        None if value.startswith(("http://", "https://")) else "is not an http:// or https:// URL"
    )


def _variable_problem(value: str) -> str | None:
    return None if value.isidentifier() else "does not name an environment variable"


def _entry_check(entry: Mapping[str, object]) -> tuple[str, str] | None:
    model = entry.get("model", "")
    if (
        isinstance(model, str)
        and model.startswith("openai-compatible/")
        and not entry.get("base_url")
    ):
        return "base_url", f"is required by {model!r}: an openai-compatible server has no default"
    return None


def _fallback_entry_check(entry: Mapping[str, object]) -> tuple[str, str] | None:
    model = entry.get("model", "")
    if not isinstance(model, str) or not model.strip():
        return "model", "is required: a fallback without a model is nothing to fall back on"
    return _entry_check(entry)


def _reasoning_kind(harness: str, key: str) -> Kind:
    allowed = REASONING_KEYS[harness]
    if key == allowed:
        return Text(choices=REASONING_LEVELS)
    takes = f"take `{allowed}`" if allowed else "take neither `variant` nor `thinking_level`"
    only = " and ".join(_NAMES[h] for h, k in REASONING_KEYS.items() if k == key)
    return Forbidden(f"is not allowed: {harness} entries {takes}; only {only} entries take `{key}`")


def _entry_fields(harness: str) -> dict[str, Field]:
    model_id = Text(check=model_id_problem, label="a model id")
    fields = {
        "model": Field(model_id, "the model id, `backend/model`"),
        # Where the user's key and transcripts go: a cloned repository must not choose.
        "base_url": Field(
            Text(check=_url_problem, label="a URL"), "the endpoint to call", scope=USER
        ),
        "api_key_env": Field(
            Text(check=_variable_problem, label="a variable name"),
            "the environment variable holding the key (default: the backend's own)",
            scope=USER,
        ),
        "max_tokens": Field(Integer(1, 1_000_000), "the reply budget of one call", 8_000),
        "temperature": Field(Number(0, 2), "the sampling temperature (default: the model's)"),
        "timeout": Field(Number(1, 86_400), "seconds one call may take", 300),
        "context_window": Field(
            Integer(1_000, 100_000_000),
            "the model's window in tokens; a chunk never exceeds it "
            "(default: `historian.historian_context`)",
        ),
    }
    for key in ("variant", "thinking_level"):
        kind = _reasoning_kind(harness, key)
        if not isinstance(kind, Forbidden):
            fields[key] = Field(kind, "the reasoning level of this model's calls")
        else:
            fields[key] = Field(kind, "")
    return fields


def _entry_kinds(harness: str) -> tuple[AnyOf, AnyOf]:
    """The model of a block (an id or a table) and one of its fallbacks."""
    title = f"{_NAMES[harness]} model entry"
    fields = _entry_fields(harness)
    model = AnyOf(
        Text(check=_string_entry_problem, label="a model id"),
        Table(title, fields, check=_entry_check),
    )
    fallback = AnyOf(
        Text(check=_fallback_problem, label="a model id"),
        Table(title, fields, check=_fallback_entry_check),
    )
    return model, fallback


def _harness_settings(harness: str) -> list[Setting]:
    name = _NAMES[harness]
    model, fallback = _entry_kinds(harness)
    prefix = f"historian.{harness}"
    settings = [
        Setting(
            f"{prefix}.model",
            model,
            f"the historian model of {name} sessions (empty: not configured)",
            profile=True,
            default_text="none",
        ),
        Setting(
            f"{prefix}.fallback_models",
            AnyOf(ListOf(fallback), *fallback.kinds),
            "more models, tried in order when the one before fails",
            profile=True,
            default=[],
        ),
        Setting(
            f"{prefix}.two_pass",
            Boolean(),
            "add the editor pass that removes low-signal lines and duplicates",
            profile=True,
            default=False,
        ),
    ]
    for key in ("variant", "thinking_level"):
        kind = _reasoning_kind(harness, key)
        doc = (
            "" if isinstance(kind, Forbidden) else "the reasoning level of every entry in the block"
        )
        settings.append(Setting(f"{prefix}.{key}", kind, doc, profile=True, default_text="none"))
    return settings


def _template_problem(value: str) -> str | None:
    # bench row "karni check (settings files)" runs without it
    from karni_historian.errors import TemplateError
    from karni_historian.templates import compile_template

    try:
        compile_template(value)
    except TemplateError as error:
        return f"is not a valid template: {error}; fix it or set it to false"
    return None


_GENERAL = [
    Setting(
        "historian.context_limit",
        Integer(1_000, 100_000_000),
        "the agent model's context window, in tokens",
        default=200_000,
    ),
    Setting(
        "historian.execute_threshold_percentage",
        Number(20, 90),
        "the share of the window in use before compaction",
        default=65,
    ),
    Setting(
        "historian.history_budget_percentage",
        Number(0.05, 0.5),
        "the share of the usable window for the history block",
        default=0.15,
    ),
    Setting(
        "historian.historian_context",
        Integer(1_000, 100_000_000),
        "the historian's window in tokens; a chunk is a quarter of it",
        default=128_000,
    ),
    Setting(
        "historian.temporal_awareness",
        Boolean(),
        "date attributes on rendered compartments",
        default=True,
    ),
    Setting(
        "historian.expand_tools.*",
        AnyOf(Text(check=_template_problem, label="a template"), Boolean(only=False)),
        "how a tool's call is shown to the historian (a template), or false for the summary",
        default_text="built-ins",
    ),
    Setting(
        "historian.share",
        AnyOf(Boolean(), ListOf(Text(label="a project folder"))),
        "share your condensed sessions at session end (`karni hooks install --share`): "
        "true for every project, or a list of project folders; only your own settings can",
        scope=USER,
        default=False,
    ),
    Setting(
        "historian.share_recommended",
        Boolean(),
        "recommend to this project's users that they share their condensed history "
        "(`karni doctor` says so; it switches nothing on)",
        scope=PROJECT,
        default=False,
    ),
    Setting(
        "historian.disable",
        Boolean(),
        "stop the historian for every harness",
        profile=True,
        default=False,
    ),
]

SETTINGS: tuple[Setting, ...] = tuple(
    _GENERAL + [setting for harness in HARNESSES for setting in _harness_settings(harness)]
)
"""Every setting karni-historian reads."""
