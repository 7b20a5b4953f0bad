"""Composing the block ``karni context --with-history`` appends.

Providers that detect a store are asked for a brief, in name order; each brief
is cleaned, given a ``HISTORY:`` heading, and the whole block is fitted under
the shared cap. Providers that detect nothing are never asked for a brief.

A provider that sets ``accepts_room = True`` is told how many characters its
brief may use (``room=N``, from :func:`karni.agent.history.cap.body_room`), so
it can size itself instead of being cut; see docs/how-to/write-a-provider.md.
"""

from __future__ import annotations

import os

from karni.agent.common.sanitize import clean_line, iter_brief_lines
from karni.agent.history.cap import HISTORY_TOKEN_CAP, BriefBlock, body_room, fit_blocks
from karni.agent.history.isolation import call_isolated
from karni.agent.history.markers import markers_rule_out

__all__ = [
    "compose",
    "detect",
    "detecting_providers",
    "provider_name",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path
    from typing import Any

    from karni.agent.history.isolation import ProviderCallOutcome


def provider_name(provider: Any) -> str | None:
    """The provider's ``name`` as one clean line, or None when it has none."""
    name = getattr(provider, "name", None)
    if not isinstance(name, str):
        return None
    cleaned = clean_line(name.replace("\n", " ")).strip()
    return cleaned or None


def _as_path(project_root: str | os.PathLike[str]) -> Path:
    from pathlib import Path

    return project_root if isinstance(project_root, Path) else Path(project_root)


def detect(provider: Any, project_root: str | os.PathLike[str]) -> bool:
    """Whether ``provider`` detects a store; a failure or a hang counts as no.

    A provider whose declared ``store_markers`` all are absent is not asked
    (see :mod:`karni.agent.history.markers`).
    """
    method = getattr(provider, "detect", None)
    if not callable(method) or markers_rule_out(provider, project_root):
        return False
    root = _as_path(project_root)
    outcome = call_isolated(lambda: bool(method(root)), provider=provider)
    return bool(outcome.ok and outcome.value)


def _installed_providers() -> list[Any]:
    from karni.agent.history.discovery import discover

    return discover().objects()


def detecting_providers(
    project_root: str | os.PathLike[str], providers: Iterable[Any] | None = None
) -> list[Any]:
    """The providers, in name order, that detect a store for ``project_root``."""
    chosen = _installed_providers() if providers is None else list(providers)
    named = sorted(
        ((name, provider) for provider in chosen if (name := provider_name(provider))),
        key=lambda pair: pair[0],
    )
    return [provider for _, provider in named if detect(provider, project_root)]


def _one_line(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    line = clean_line(" ".join(value.splitlines())).strip()
    return line or None


def _brief_method(provider: Any, path: str | None) -> Any:
    """The method that gives ``provider``'s brief, or None when it has none to give."""
    method = provider.context if path is not None else getattr(provider, "project_context", None)
    return method if callable(method) else None


def _heading(name: str, path: str | None) -> str:
    where = "project" if path is None else _one_line(path) or "?"
    return f"HISTORY: {where} ({name})"


def _ask(provider: Any, root: Path, path: str | None, room: int) -> ProviderCallOutcome:
    """Call the brief method, passing ``room`` only to a provider that declares ``accepts_room``."""
    method = _brief_method(provider, path)
    args = (root,) if path is None else (root, path)
    if getattr(provider, "accepts_room", False) is True:
        return call_isolated(lambda: method(*args, room=room), provider=provider)
    return call_isolated(method, *args, provider=provider)


def _block(
    provider: Any, name: str, root: Path, path: str | None, max_tokens: int, asked_count: int
) -> BriefBlock | None:
    heading = _heading(name, path)
    outcome = _ask(provider, root, path, body_room(heading, asked_count, max_tokens))
    if not outcome.ok or not isinstance(outcome.value, str) or not outcome.value.strip():
        return None

    asked: list[str | None] = []  # full_command is a provider call: ask it once at most

    def truncation_line(with_command: bool) -> str:
        prefix = f"… truncated at ~{max_tokens} tokens; "
        if with_command and not asked:
            asked.append(_full_command(provider, root, path))
        command = asked[0] if with_command else None
        if command:
            return f"{prefix}full brief: {command}"
        return f"{prefix}{name} holds the full brief"

    return BriefBlock(name, heading, iter_brief_lines(outcome.value), truncation_line)


def _full_command(provider: Any, root: Path, path: str | None) -> str | None:
    method = getattr(provider, "full_command", None)
    if not callable(method):
        return None
    outcome = call_isolated(method, root, path, provider=provider)
    return _one_line(outcome.value) if outcome.ok else None


def compose(
    project_root: str | os.PathLike[str],
    path: str | None = None,
    *,
    providers: Sequence[Any] | None = None,
    max_tokens: int = HISTORY_TOKEN_CAP,
) -> str | None:
    r"""The block ``karni context --with-history`` appends, or None when there is none.

    Args:
        project_root: The Karni project's root folder.
        path: The file to brief, project-relative and POSIX; None for the
            project-level brief (providers without ``project_context`` then
            add nothing).
        providers: The providers to ask; the installed ones by default.
        max_tokens: The cap on the whole block, headings included, in
            estimated tokens (``ceil(characters / 4)``).

    Returns:
        The lines joined with ``\\n``, without a trailing newline. One
        ``HISTORY:`` heading per provider that detects a store and has
        something to say, in name order.
    """
    asked = [
        provider
        for provider in detecting_providers(project_root, providers)
        if _brief_method(provider, path) is not None
    ]
    blocks: list[BriefBlock] = []
    for provider in asked:
        name = provider_name(provider)
        assert name is not None
        block = _block(provider, name, _as_path(project_root), path, max_tokens, len(asked))
        if block is not None:
            blocks.append(block)
    lines = fit_blocks(blocks, max_tokens)
    return "\n".join(lines) if lines else None
