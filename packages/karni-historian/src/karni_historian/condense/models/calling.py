"""What every model backend shares to make one call: the reply, the key and the errors.

Each backend module (``anthropic_api``, ``openai_api``, ``claude_code``)
imports this one and nothing above it; :mod:`karni_historian.condense.models.backends`
looks a backend up by its name. Errors become
:class:`~karni_historian.errors.ModelCallError` marked transient or permanent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from karni_historian.errors import ModelCallError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

    from karni_historian.condense.models.entries import ModelEntry

__all__ = [
    "NO_KEY",
    "Reply",
    "api_key",
    "call_sdk",
    "connection_error",
    "error_detail",
    "missing_extra",
    "status_error",
]

NO_KEY = "karni-no-key"
"""What keyless local servers are sent as an API key (the SDK insists on one)."""

_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 529})


@dataclass(frozen=True, slots=True)
class Reply:
    """What a model answered.

    Attributes:
        text: The reply's text (its reasoning text when it gave no other).
        raw: The raw response, for dumps.
        truncated: The reply stopped at its token limit.
    """

    text: str
    raw: str
    truncated: bool = False


def api_key(entry: ModelEntry, *, required: bool) -> str | None:
    """The entry's key from the environment.

    Raises:
        ModelCallError: (permanent) the variable is unset although the
            backend needs a key, or ``api_key_env`` names an unset variable.
    """
    variable = entry.key_variable
    if variable is None:
        return None
    value = os.environ.get(variable, "").strip()
    if not value and (required or entry.api_key_env):
        raise ModelCallError(
            f"{entry.model_id}: `{variable}` is not set; export the API key in it "
            f"(Karni reads keys from the environment only)",
            transient=False,
        )
    return value or None


def missing_extra(entry: ModelEntry) -> ModelCallError:
    """The permanent error for a model whose SDK is not installed."""
    return ModelCallError(
        f"{entry.model_id} needs the {entry.extra} SDK: install "
        f"`karni-historian[{entry.extra}]` (for example "
        f"`scripts/install 'karni-historian[{entry.extra}]'` in a clone of Karni, or "
        f"`pip install 'karni-historian[{entry.extra}]'` beside karni)",
        transient=False,
    )


def status_error(entry: ModelEntry, status: int, detail: str, raw: str) -> ModelCallError:
    """The error for an HTTP ``status``: 408/409/429/5xx/529 transient, others permanent."""
    transient = status in _TRANSIENT_STATUSES or 500 <= status <= 599
    where = f" at {entry.endpoint}" if entry.endpoint else ""
    if status in (401, 403):
        reason = f"authentication failed ({status}); check the key in `{entry.key_variable}`"
    elif status == 404:
        reason = f"unknown model `{entry.model}`{where} (404); check the model id"
    elif status == 429:
        reason = "rate limited (429)"
    elif status == 529:
        reason = "overloaded (529)"
    else:
        reason = f"HTTP {status}"
    text = f"{entry.model_id}: {reason}"
    if detail:
        text += f": {' '.join(detail.split())[:300]}"
    return ModelCallError(text, transient=transient, raw=raw, status=status)


def connection_error(entry: ModelEntry, error: BaseException, *, timed_out: bool) -> ModelCallError:
    """The transient error for a timeout or a dropped or refused connection."""
    where = entry.endpoint or "the default endpoint"
    if timed_out:
        text = f"{entry.model_id}: no answer within {entry.timeout:g} s (timeout)"
    else:
        text = f"{entry.model_id}: cannot reach {where} ({type(error).__name__}: {error})"
    return ModelCallError(text, transient=True)


def error_detail(body: object) -> str:
    """The ``error.message`` of a JSON error body (both wire formats), else ``""``."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
            if isinstance(message, str):
                return message
    return ""


def call_sdk(entry: ModelEntry, sdk: Any, call: Callable[[], T]) -> T:
    """Run ``call`` (one request through ``sdk``, ``anthropic`` or ``openai``).

    Both SDKs name their errors alike; each becomes a :class:`ModelCallError`:
    HTTP errors by status, timeouts and connection failures transient, and a
    body the SDK could not read transient too.
    """
    try:
        return call()
    except sdk.APIStatusError as error:
        detail = error_detail(error.body)
        raise status_error(entry, error.status_code, detail, error.response.text) from None
    except sdk.APITimeoutError as error:
        raise connection_error(entry, error, timed_out=True) from None
    except sdk.APIConnectionError as error:
        raise connection_error(entry, error, timed_out=False) from None
    except sdk.APIError as error:
        raise ModelCallError(
            f"{entry.model_id}: unreadable response ({error})", transient=True
        ) from None
