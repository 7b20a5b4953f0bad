"""The historian a stored session is condensed with, ready for the runner's hook.

Joins the pieces for one session: its harness (from the transcript source),
the chain configured for it (:mod:`.settings`), the prompt context read from
the store (the newest compartments' titles and the project memory), the
redactor that knows the credentials in use, and the dump folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from karni_historian.condense.models.settings import harness_of_source, resolve_chain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_historian.condense.models.chain import ModelHistorian
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.condense.models.prompt import PromptContext
    from karni_historian.condense.models.redaction import Redactor
    from karni_historian.condense.models.settings import ConfigFiles, ResolvedChain
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = [
    "PreparedSession",
    "chain_for_session",
    "credential_values",
    "historian_for",
    "prepare_session",
    "prompt_context",
]


def chain_for_session(
    store: Store, session_id: str, files: ConfigFiles, *, default_window: int
) -> ResolvedChain:
    """The resolved chain for the session's harness (its own model for OpenCode, if recorded)."""
    info = store.session(session_id)
    harness = harness_of_source(info.source) if info is not None else None
    session_model = getattr(info, "model", None)  # recorded by readers that know it
    return resolve_chain(
        files,
        harness,
        session_model=session_model if isinstance(session_model, str) else None,
        default_window=default_window,
    )


def prompt_context(store: Store, session_id: str) -> PromptContext:
    """The session's newest compartments and the project memory, as the prompt names them."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.models.prompt import REFERENCE_COUNT, PromptContext, Reference

    stored = store.compartments(session_id)[-REFERENCE_COUNT:]
    references = [
        Reference(s.compartment.start, s.compartment.end, s.compartment.title) for s in stored
    ]
    return PromptContext(references, store.facts())


def credential_values(entries: Iterable[ModelEntry]) -> list[str]:
    """The values of the key variables the entries read: redacted from everything."""
    names = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"}
    names.update(entry.key_variable for entry in entries if entry.key_variable)
    return [os.environ[name] for name in sorted(names) if os.environ.get(name)]


def historian_for(
    chain: ResolvedChain, store: Store, session_id: str, *, redactor: Redactor | None = None
) -> ModelHistorian | None:
    """The runner's hook for ``chain``; None when the built-in historian alone runs."""
    if chain.disabled or chain.is_extractive:
        return None
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.models.chain import ModelHistorian
    from karni_historian.condense.models.dumps import DumpFolder
    from karni_historian.condense.models.redaction import Redactor

    redact = (redactor or Redactor()).with_values(credential_values(chain.entries))
    return ModelHistorian(
        chain,
        lambda: prompt_context(store, session_id),
        DumpFolder(store.root, redact),
        redact,
    )


@dataclass(slots=True)
class PreparedSession:
    """The historian one session is condensed with.

    Attributes:
        chain: The chain the session resolved to.
        historian: The runner's ``historian=`` hook; None for the built-in
            ``local/extractive`` (or when disabled).
        settings: The settings to run with: the chunk budget follows the
            smallest context window in the chain, so no chunk exceeds any
            of its models' windows.
    """

    chain: ResolvedChain
    historian: ModelHistorian | None
    settings: Settings

    @property
    def disabled(self) -> bool:
        """``historian.disable = true``: nothing is condensed."""
        return self.chain.disabled

    @property
    def notes(self) -> list[str]:
        """Failures that did not fail the run (an editor pass that failed)."""
        return list(self.historian.notes) if self.historian else []

    def disabled_message(self) -> str:
        """Why nothing runs, when :attr:`disabled`."""
        origin = self.chain.origins.get("disable", "")
        where = _ORIGIN_NAMES.get(origin, origin or "configuration")
        return f"the historian is disabled (`historian.disable = true` in {where})"


_ORIGIN_NAMES = {"project": "the project's .karni/config.toml", "user": "your user configuration"}


def prepare_session(
    store: Store, session_id: str, settings: Settings, files: ConfigFiles
) -> PreparedSession:
    """The chain, hook and settings for condensing one session."""
    chain = chain_for_session(store, session_id, files, default_window=settings.historian_context)
    historian = historian_for(chain, store, session_id)
    if historian is not None:
        window = min(entry.context_window for entry in chain.entries)
        settings = replace(settings, historian_context=window)
    return PreparedSession(chain, historian, settings)
