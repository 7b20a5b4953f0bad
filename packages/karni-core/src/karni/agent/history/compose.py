"""Composing the block ``karni context --with-history`` appends.

Providers that detect a store are asked for a brief, in name order; each brief
is cleaned, given a ``HISTORY:`` heading, and the whole block is fitted under
the shared cap. Providers that detect nothing are never asked for a brief.

A provider that sets ``accepts_room = True`` is told how many characters its
brief may use (``room=N``, from :func:`karni.agent.history.cap.body_room`), so
it can size itself instead of being cut; see docs/how-to/write-a-provider.md.

What a brief needs past detection (the isolated call and the cleaning
helpers) is imported on first use, so a project with no store loads only the
store-marker check (docs/performance.md).
"""

from __future__ import annotations

import os

from karni.agent.history.cap import HISTORY_TOKEN_CAP, BriefBlock, body_room, fit_blocks
from karni.agent.history.discovery import discover, provider_name
from karni.agent.history.markers import markers_rule_out

__all__ = [
    "calls_in_process",
    "compose",
    "detect",
    "detect_outcome",
    "detecting_providers",
    "ended_detect",
    "named_providers",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path
    from typing import Any

    from karni.agent.history.cap import BriefBlock
    from karni.agent.history.isolation import ProviderCallOutcome


def named_providers(
    providers: Iterable[Any] | None = None,
    *,
    project_root: str | os.PathLike[str] | None = None,
) -> list[tuple[str, Any]]:
    """``(name, provider)`` pairs in name order; each name read inside the isolated call.

    The installed providers (the default) were named when they were loaded;
    with ``project_root``, those that cannot detect a store there may be left
    out unloaded (see :func:`karni.agent.history.discovery.discover`). A
    provider whose name cannot be read in time is left out.
    """
    if providers is None:
        found = discover(project_root=project_root).providers
        pairs = [(installed.provider_name, installed.provider) for installed in found]
    else:
        # bench row "karni context --with-history FILE (no store)" runs without it
        from karni.agent.history.isolation import call_isolated

        pairs = []
        for provider in providers:
            outcome = call_isolated(provider_name, provider, provider=provider)
            if outcome.ok and outcome.value:
                pairs.append((outcome.value, provider))
    return sorted(pairs, key=lambda pair: pair[0])


def _root_for(provider: Any, project_root: str | os.PathLike[str]) -> Path | str:
    """The project root as ``provider`` receives it: a ``Path``, or a ``str`` if it accepts one.

    A provider that sets ``accepts_str_root = True`` gets ``os.fspath(project_root)``,
    so Karni need not import :mod:`pathlib` for it (see docs/how-to/write-a-provider.md).
    """
    try:
        accepts_str = getattr(provider, "accepts_str_root", False) is True
    except Exception:  # a hint that cannot be read is no hint
        accepts_str = False
    if accepts_str:
        return os.fspath(project_root)
    # bench row "karni context --with-history FILE (no store)" runs without it
    from pathlib import Path

    return project_root if isinstance(project_root, Path) else Path(project_root)


def detect(provider: Any, project_root: str | os.PathLike[str]) -> bool:
    """Whether ``provider`` detects a store; a failure or a hang counts as no.

    A provider whose declared ``store_markers`` all are absent is not asked
    (see :mod:`karni.agent.history.markers`).
    """
    outcome = detect_outcome(provider, project_root)
    return outcome is not None and outcome.ok and outcome.value is True


def detect_outcome(
    provider: Any, project_root: str | os.PathLike[str]
) -> ProviderCallOutcome | None:
    """The isolated call of ``provider.detect``; None when its store markers rule a store out.

    ``karni doctor`` reads it to tell "no store" from a ``detect`` that
    ended its process (``outcome.ended``, see :mod:`karni.agent.history.child`;
    :func:`ended_detect` remembers it).
    """
    outcome = _detected(provider, project_root, _detects)
    if outcome is not None and outcome.ended is not None:
        _ended_detects[id(provider)] = outcome.ended
    return outcome


_ended_detects: dict[int, int] = {}
"""How each provider's ``detect`` ended its process, by the provider's ``id``, when it did."""


def ended_detect(provider: Any) -> int | None:
    """How ``provider``'s last :func:`detect` ended its process, or None when it did not.

    The exit status, or minus the signal's number.
    """
    return _ended_detects.get(id(provider))


def _detected(
    provider: Any,
    project_root: str | os.PathLike[str],
    check: Any,
    *args: Any,
    in_child: bool = True,
) -> ProviderCallOutcome | None:
    """``check(provider, root, *args)`` run in the isolated call; None when markers rule it out.

    ``in_child``: in a child of its own, in the ``karni`` command (see
    :func:`~karni.agent.history.isolation.call_isolated`).
    """
    if markers_rule_out(provider, project_root):
        return None
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.isolation import call_isolated

    root = _root_for(provider, project_root)
    in_child = in_child and not calls_in_process(provider)
    return call_isolated(check, provider, root, *args, provider=provider, in_child=in_child)


def calls_in_process(provider: Any) -> bool:
    """Whether ``provider`` says its calls never end the process (``calls_in_process = True``).

    The ``karni`` command then makes them in its own process, without the
    child it forks for any other provider's (:mod:`karni.agent.history.child`):
    Karni's own providers say so, and so may any provider whose code cannot
    call ``os._exit`` or crash (docs/how-to/write-a-provider.md).
    """
    try:
        return getattr(provider, "calls_in_process", False) is True
    except Exception:  # a hint that cannot be read is no hint
        return False


def _true(outcome: ProviderCallOutcome | None) -> bool:
    return outcome is not None and outcome.ok and outcome.value is True


def _detects(provider: Any, root: Path | str) -> bool:
    """Runs inside the isolated call: whether ``provider.detect(root)`` is true."""
    method = getattr(provider, "detect", None)
    return callable(method) and bool(method(root))


def _detects_with_brief(provider: Any, root: Path | str, path: str | None) -> bool:
    """Runs inside the isolated call: it detects a store and has the method for ``path``."""
    return _detects(provider, root) and _brief_method(provider, path) is not None


def detecting_providers(
    project_root: str | os.PathLike[str], providers: Iterable[Any] | None = None
) -> list[Any]:
    """The providers, in name order, that detect a store for ``project_root``."""
    return [
        provider for _, provider in named_providers(providers) if detect(provider, project_root)
    ]


def _one_line(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.common.sanitize import clean_line

    line = clean_line(" ".join(value.splitlines())).strip()
    return line or None


def _brief_method(provider: Any, path: str | None) -> Any:
    """The method that gives ``provider``'s brief, or None when it has none to give."""
    method = provider.context if path is not None else getattr(provider, "project_context", None)
    return method if callable(method) else None


def _heading(name: str, path: str | None) -> str:
    where = "project" if path is None else _one_line(path) or "?"
    return f"HISTORY: {where} ({name})"


def _brief(provider: Any, root: Path | str, path: str | None, room: int) -> str | None:
    """Runs inside the isolated call: the brief as plain text.

    ``room`` is passed only to a provider that declares ``accepts_room``.
    """
    method = _brief_method(provider, path)
    if method is None:
        return None
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.common.text import plain_text

    args = (root,) if path is None else (root, path)
    if getattr(provider, "accepts_room", False) is True:
        return plain_text(method(*args, room=room))
    return plain_text(method(*args))


def _call_text(provider: Any, method: str, *args: Any) -> str | None:
    """Runs inside the isolated call: ``provider.method(*args)`` as plain text."""
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.common.text import plain_text

    function = getattr(provider, method, None)
    return plain_text(function(*args)) if callable(function) else None


def _block(
    provider: Any,
    name: str,
    root: Path | str,
    path: str | None,
    max_tokens: int,
    asked_count: int,
    progress: tuple[Callable[[int], None], int],
) -> BriefBlock | None:
    """The provider's block; ``progress`` is ``(entering, index)``, said before each call."""
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.common.sanitize import iter_brief_lines
    from karni.agent.history.isolation import call_isolated

    heading = _heading(name, path)
    room = body_room(heading, asked_count, max_tokens)
    outcome = call_isolated(_brief, provider, root, path, room, provider=provider)
    if not outcome.ok or outcome.value is None or not outcome.value.strip():
        return None

    asked: list[str | None] = []  # full_command is a provider call: ask it once at most

    def truncation_line(with_command: bool) -> str:
        prefix = f"… truncated at ~{max_tokens} tokens; "
        if with_command and not asked:
            entering, index = progress
            entering(index)
            asked.append(_full_command(provider, root, path))
        command = asked[0] if with_command else None
        if command:
            return f"{prefix}full brief: {command}"
        return f"{prefix}{name} holds the full brief"

    return BriefBlock(name, heading, iter_brief_lines(outcome.value), truncation_line)


def _full_command(provider: Any, root: Path | str, path: str | None) -> str | None:
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.isolation import call_isolated

    outcome = call_isolated(_call_text, provider, "full_command", root, path, provider=provider)
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
    named = [
        (name, provider)
        for name, provider in named_providers(providers, project_root=project_root)
        if not markers_rule_out(provider, project_root)
    ]
    if not named:
        return None  # no store: nothing to fit
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.isolation import forks, provider_timeout

    if forks() and not all(calls_in_process(provider) for _, provider in named):
        # bench row "karni context --with-history FILE (no store)" runs without it
        from karni.agent.history.child import entering, run_in_children

        longest = max(provider_timeout(provider) for _, provider in named)
        work = (project_root, path, max_tokens, entering)
        try:
            return run_in_children(_composed, named, work, longest)  # type: ignore[no-any-return]
        except OSError:  # no child could be started: compose here, each call still isolated
            pass
    return _composed(named, project_root, path, max_tokens, _nowhere)


def _nowhere(index: int) -> None:
    """Where :func:`_composed` reports its progress when it runs in Karni's own process."""


def _composed(
    named: list[tuple[str, Any]],
    project_root: str | os.PathLike[str],
    path: str | None,
    max_tokens: int,
    entering: Callable[[int], None],
) -> str | None:
    """The block from the providers ``named`` (their markers allow a store).

    In the ``karni`` command it runs in a child (:mod:`karni.agent.history.child`),
    which learns from ``entering(index)`` whose code runs next: if that code
    ends the child, the block is composed again without that provider.
    """
    asked = []
    for index, (name, provider) in enumerate(named):
        entering(index)
        if _true(_detected(provider, project_root, _detects_with_brief, path, in_child=False)):
            asked.append((index, name, provider))
    if not asked:
        return None

    blocks: list[BriefBlock] = []
    for index, name, provider in asked:
        root = _root_for(provider, project_root)
        entering(index)
        block = _block(provider, name, root, path, max_tokens, len(asked), (entering, index))
        if block is not None:
            blocks.append(block)
    lines = fit_blocks(blocks, max_tokens)
    return "\n".join(lines) if lines else None
