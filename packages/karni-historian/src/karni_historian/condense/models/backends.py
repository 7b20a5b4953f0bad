"""One call to one historian model, whatever runs it: the backend is looked up by name.

:func:`complete` sends a prompt to a :class:`~.entries.ModelEntry` through
the backend its model id names (the part before the ``/``) and returns its
:class:`~.calling.Reply`, or raises
:class:`~karni_historian.errors.ModelCallError` marked transient or
permanent. Each backend is a module with a ``complete(entry, prompt)``; the
SDKs (optional extras) are imported only inside those calls, and their own
retries are off: the chain retries.
"""

from __future__ import annotations

from karni_historian.condense.models import anthropic_api, claude_code, openai_api
from karni_historian.errors import ModelCallError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from karni_historian.condense.models.calling import Reply
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.condense.models.prompt import Prompt

__all__ = ["CALLS", "complete"]

CALLS: dict[str, Callable[[ModelEntry, Prompt], Reply]] = {
    "anthropic": anthropic_api.complete,
    "openai": openai_api.complete,
    "openai-compatible": openai_api.complete,
    "ollama": openai_api.complete,
    "claude-code": claude_code.complete,
}
"""The call of each backend that runs a model (every backend name but ``local``)."""


def complete(entry: ModelEntry, prompt: Prompt) -> Reply:
    """Send ``prompt`` to ``entry`` once.

    Raises:
        ModelCallError: The call failed; ``transient`` says whether retrying
            the same model may help.
    """
    backend = CALLS.get(entry.backend)
    if backend is None:
        raise ModelCallError(f"{entry.model_id} is not a model that can be called", transient=False)
    return backend(entry, prompt)
