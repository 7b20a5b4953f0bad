"""The ``openai/``, ``openai-compatible/`` and ``ollama/`` backends: Chat Completions.

All three speak the OpenAI Chat Completions wire format through the official
``openai`` SDK (the ``karni-historian[openai]`` extra, imported only by
:func:`complete`). ``openai/`` reads ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``;
``openai-compatible/`` needs a ``base_url`` and sends a key only when
``api_key_env`` names one; ``ollama/`` is the same with Ollama's default
local address.
"""

from __future__ import annotations

from karni_historian.condense.models.calling import NO_KEY, Reply, api_key, call_sdk, missing_extra
from karni_historian.errors import ModelCallError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.condense.models.calling import Reply
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.condense.models.prompt import Prompt

__all__ = ["complete", "request_body"]


def request_body(entry: ModelEntry, prompt: Prompt) -> dict[str, Any]:
    """The Chat Completions parameters for one call.

    OpenAI's own API takes the reply budget as ``max_completion_tokens``;
    local servers understand ``max_tokens``.
    """
    body: dict[str, Any] = {
        "model": entry.model,
        "messages": [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ],
    }
    budget_key = "max_completion_tokens" if entry.backend == "openai" else "max_tokens"
    body[budget_key] = entry.max_tokens
    if entry.temperature is not None:
        body["temperature"] = entry.temperature
    if entry.reasoning and entry.reasoning != "off":
        body["reasoning_effort"] = entry.reasoning
    return body


def complete(entry: ModelEntry, prompt: Prompt) -> Reply:
    """One Chat Completions call; see :func:`karni_historian.condense.models.backends.complete`."""
    key = api_key(entry, required=entry.backend == "openai")
    try:
        import openai
    except ImportError:
        raise missing_extra(entry) from None
    client = openai.OpenAI(
        api_key=key or NO_KEY, base_url=entry.endpoint, max_retries=0, timeout=entry.timeout
    )
    with client:
        completion = call_sdk(
            entry, openai, lambda: client.chat.completions.create(**request_body(entry, prompt))
        )
    return _reply(entry, completion)


def _reply(entry: ModelEntry, completion: Any) -> Reply:
    raw = completion.model_dump_json()
    if not completion.choices:
        raise ModelCallError(f"{entry.model_id}: the reply has no choices", transient=True, raw=raw)
    choice = completion.choices[0]
    text = choice.message.content or ""
    if not text.strip():
        extra = choice.message.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        text = reasoning if isinstance(reasoning, str) else ""
    return Reply(text, raw, truncated=choice.finish_reason == "length")
