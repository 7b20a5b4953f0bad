"""The ``anthropic/`` backend: the Anthropic Messages API through the official SDK.

The key comes from ``ANTHROPIC_API_KEY`` (or the entry's ``api_key_env``),
the endpoint from the entry's ``base_url``, else ``ANTHROPIC_BASE_URL``, else
the SDK's default. The SDK is the ``karni-historian[anthropic]`` extra and
is imported only by :func:`complete`.
"""

from __future__ import annotations

from karni_historian.condense.models.calling import Reply, api_key, call_sdk, missing_extra

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.condense.models.calling import Reply
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.condense.models.prompt import Prompt

__all__ = ["THINKING_BUDGETS", "complete", "request_body"]

THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32000}
"""Extended-thinking budgets for ``thinking_level``/``variant`` (``max`` takes the largest)."""


def request_body(entry: ModelEntry, prompt: Prompt) -> dict[str, Any]:
    """The Messages API parameters for one call."""
    body: dict[str, Any] = {
        "model": entry.model,
        "max_tokens": entry.max_tokens,
        "system": prompt.system,
        "messages": [{"role": "user", "content": prompt.user}],
    }
    if entry.temperature is not None:
        body["temperature"] = entry.temperature
    if entry.reasoning and entry.reasoning != "off":
        budget = THINKING_BUDGETS.get(entry.reasoning, max(THINKING_BUDGETS.values()))
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = entry.max_tokens + budget  # thinking counts against max_tokens
        body.pop("temperature", None)  # extended thinking accepts no temperature
    return body


def complete(entry: ModelEntry, prompt: Prompt) -> Reply:
    """One Messages API call; see :func:`karni_historian.condense.models.backends.complete`."""
    key = api_key(entry, required=True)
    try:
        import anthropic
    except ImportError:
        raise missing_extra(entry) from None
    client = anthropic.Anthropic(
        api_key=key, base_url=entry.endpoint, max_retries=0, timeout=entry.timeout
    )
    with client:
        message = call_sdk(
            entry, anthropic, lambda: client.messages.create(**request_body(entry, prompt))
        )
    return _reply(message)


def _reply(message: Any) -> Reply:
    texts = [block.text for block in message.content if getattr(block, "type", "") == "text"]
    if not any(t.strip() for t in texts):
        texts = [
            block.thinking for block in message.content if getattr(block, "type", "") == "thinking"
        ]
    return Reply(
        "".join(texts),
        message.model_dump_json(),
        truncated=message.stop_reason == "max_tokens",
    )
