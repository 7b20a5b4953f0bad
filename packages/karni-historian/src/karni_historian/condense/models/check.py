"""``karni-historian models check``: is each configured model reachable?

Every model of every configured harness chain gets one tiny request (a
model used by several harnesses is called once); the report says, per
harness and entry, whether it answered, and why not. ``local/extractive``
is built in and never called.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from karni_historian.condense.models.backends import complete
from karni_historian.condense.models.prompt import Prompt
from karni_historian.condense.models.session import credential_values
from karni_historian.condense.models.settings import HARNESSES, resolve_chain
from karni_historian.errors import ModelCallError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from karni_historian.condense.models.calling import Reply
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.condense.models.prompt import Prompt
    from karni_historian.condense.models.redaction import Redactor
    from karni_historian.condense.models.settings import ConfigFiles

__all__ = ["CHECK_PROMPT", "EntryCheck", "check_models"]

CHECK_PROMPT = "Reply with the single word OK."
"""The tiny request each model is sent."""

_CHECK_TOKENS = 64


@dataclass(frozen=True, slots=True)
class EntryCheck:
    """One entry's result.

    Attributes:
        harness: The harness block the entry belongs to.
        model_id: The model.
        role: ``model`` or ``fallback N``.
        ok: Whether the model answered.
        detail: ``reachable``, ``built in`` or the (redacted) error.
    """

    harness: str
    model_id: str
    role: str
    ok: bool
    detail: str

    def line(self) -> str:
        """The report line."""
        mark = "ok  " if self.ok else "FAIL"
        return f"{mark} {self.harness:<11} {self.role:<10} {self.model_id}: {self.detail}"


def check_models(
    files: ConfigFiles,
    *,
    default_window: int,
    redactor: Redactor,
    call: Callable[[ModelEntry, Prompt], Reply] | None = None,
) -> list[EntryCheck]:
    """Call each configured model once; an empty list when no harness configures one."""
    send = call or complete
    prompt = Prompt("You answer health checks.", CHECK_PROMPT)
    seen: dict[tuple[str, str | None], tuple[bool, str]] = {}
    results: list[EntryCheck] = []
    for harness in HARNESSES:
        chain = resolve_chain(files, harness, default_window=default_window)
        if chain.disabled or chain.is_extractive:
            continue
        redact = redactor.with_values(credential_values(chain.entries))
        for number, entry in enumerate(chain.entries):
            key = (entry.model_id, entry.endpoint)
            if key not in seen:
                seen[key] = _probe(entry, prompt, send, redact)
            role = "model" if number == 0 else f"fallback {number}"
            ok, detail = seen[key]
            results.append(EntryCheck(harness, entry.model_id, role, ok, detail))
    return results


def _probe(
    entry: ModelEntry,
    prompt: Prompt,
    send: Callable[[ModelEntry, Prompt], Reply],
    redact: Redactor,
) -> tuple[bool, str]:
    if entry.model_id == "local/extractive":
        return True, "built in"
    try:
        send(replace(entry, max_tokens=min(entry.max_tokens, _CHECK_TOKENS)), prompt)
    except ModelCallError as error:
        return False, redact(str(error))
    return True, "reachable"
