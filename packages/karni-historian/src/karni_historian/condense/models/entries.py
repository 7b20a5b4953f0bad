"""One historian model as configured: its id, backend and call settings.

A model id is ``backend/model``; this module knows the backends, where each
one finds its endpoint and credentials, and the settings an entry may carry.
It is pure data (no SDK, no network), so configuration can be checked without
calling anything; see ``docs/historian-models.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from karni_historian.declared_settings import EXTRACTIVE_ID, REASONING_LEVELS

__all__ = [
    "BACKENDS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT",
    "EXTRACTIVE_ID",
    "OLLAMA_BASE_URL",
    "REASONING_LEVELS",
    "ModelEntry",
    "split_model_id",
]

OLLAMA_BASE_URL = "http://localhost:11434/v1"
"""Ollama's default local address (its OpenAI-compatible endpoint)."""

DEFAULT_MAX_TOKENS = 8_000
"""The reply budget of one call when an entry sets no ``max_tokens``."""

DEFAULT_TIMEOUT = 300.0
"""Seconds one call may take when an entry sets no ``timeout``."""

BACKENDS: dict[str, tuple[str | None, str | None, str | None]] = {
    # backend: (API key variable, base URL variable, SDK extra)
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "anthropic"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "openai"),
    "openai-compatible": (None, None, "openai"),
    "ollama": (None, None, "openai"),
    "claude-code": (None, None, None),
    "local": (None, None, None),
}
"""Each backend's credential variable, endpoint variable and optional extra."""


def split_model_id(model_id: str) -> tuple[str, str] | None:
    """``backend/model`` as ``(backend, model)``, or None when it is not such an id."""
    backend, slash, name = model_id.partition("/")
    if not slash or not backend or not name.strip() or backend not in BACKENDS:
        return None
    return backend, name


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelEntry:
    """One model of a historian chain, with the settings of its calls.

    Attributes:
        model_id: ``backend/model``, for example ``anthropic/claude-haiku-4-5``.
        base_url: The endpoint; for ``anthropic`` and ``openai`` the
            ``*_BASE_URL`` variable or the SDK's default when None.
        api_key_env: The environment variable holding the key; None for the
            backend's own (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``) or, for
            local servers, no key at all.
        max_tokens: The reply budget of one call.
        temperature: The sampling temperature, or None for the model's default.
        timeout: Seconds one call may take.
        context_window: The model's window in tokens; a chunk is a quarter of
            it and a prompt never exceeds it.
        reasoning: ``thinking_level`` or ``variant``, when set (one of
            :data:`REASONING_LEVELS`).
        origin: Where the entry was configured (``project``, ``user``,
            ``profile NAME``, ``session`` or ``default``).
    """

    model_id: str
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float | None = None
    timeout: float = DEFAULT_TIMEOUT
    context_window: int = 128_000
    reasoning: str | None = None
    origin: str = "default"

    @property
    def backend(self) -> str:
        """The part of the id before the first ``/``."""
        return self.model_id.partition("/")[0]

    @property
    def model(self) -> str:
        """The part of the id after the first ``/``: what the backend is asked for."""
        return self.model_id.partition("/")[2]

    @property
    def extra(self) -> str | None:
        """The ``karni-historian[...]`` extra whose SDK the backend needs, if any."""
        return BACKENDS[self.backend][2]

    @property
    def key_variable(self) -> str | None:
        """The environment variable the key is read from, if the backend needs one."""
        return self.api_key_env or BACKENDS[self.backend][0]

    @property
    def endpoint(self) -> str | None:
        """The base URL the call goes to, None for the SDK's own default."""
        if self.base_url:
            return self.base_url
        if self.backend == "ollama":
            return OLLAMA_BASE_URL
        variable = BACKENDS[self.backend][1]
        return (os.environ.get(variable) or None) if variable else None
