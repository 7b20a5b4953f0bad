"""The one-time suggestion of a prompt-history tool, and every reason not to show it.

``karni doctor`` (on stdout, after its report) and a clean ``karni check``
outside CI (on stderr) may print :data:`TIP` once per project. It is never
shown with ``-q/--quiet``, in CI, with ``suggest_tools = false`` (project or
global settings), when a provider detects a store, or when any provider but
the built-in Chronicle one is installed: for the tip, which suggests
Chronicle, every other provider is third-party, Karni's own ADR provider and
historian included. Showing it is recorded first, in
``.karni/local/state.json``; if that fails it is not shown, so it can never
repeat. ``context``, ``rules``, ``config`` and ``new`` never call this.
"""

from __future__ import annotations

from karni.cli.config.state import claim_once, read_state

__all__ = ["STATE_KEY", "TIP", "offer_tip", "suppressed_by"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from karni.agent.history import Discovery

TIP = (
    "tip: no prompt-history store found. `karni context --with-history` can brief\n"
    "     an agent with what was already asked about a file. Works with Gigai\n"
    "     Chronicle (MIT, local-only, by Karni's author).\n"
    "     Silence this: karni config set suggest_tools false\n"
)
"""The suggestion, word for word."""

STATE_KEY = "history_tip_shown"
"""The key in ``.karni/local/state.json`` that records the tip was shown."""


def _suggest_tools(root: str) -> bool:
    # bench row "karni check" runs without it
    from karni.agent.common.settings_registry import table_of
    from karni.cli.config.declared import SETTINGS
    from karni.cli.config.settings import ConfigError, resolve

    try:  # karni-cli's own declarations suffice: no other package's module is imported
        value, _, _ = resolve("suggest_tools", root, table=table_of(SETTINGS))
    except ConfigError:
        return False  # an unreadable setting might be the "no": stay quiet
    return value is not False


def suppressed_by(
    root: str,
    *,
    quiet: bool,
    discovery: Discovery | None = None,
    detected: list[str] | None = None,
) -> str | None:
    """Why the tip must not be shown, or None when it may be (once).

    Args:
        root: The project root.
        quiet: ``-q/--quiet`` was given.
        discovery: The installed providers, when the caller already has them.
        detected: Names of the providers that detect a store, when known.
    """
    # bench row "karni check" runs without it
    from karni.agent.common.ci import in_ci

    if quiet:
        return "quiet"
    if in_ci():
        return "ci"
    if not _suggest_tools(root):
        return "suggest_tools"
    if discovery is None:
        # bench row "karni check" runs without it
        from karni.agent.history import discover

        discovery = discover()
    if _another_provider(discovery):
        return "another provider"
    if detected is None:
        # bench row "karni check" runs without it
        from karni.agent.history import detect

        detected = [p.name for p in discovery.providers if detect(p.provider, root)]
    if detected:
        return "store detected"
    return None


def _another_provider(discovery: Discovery) -> bool:
    """Whether a provider besides the built-in Chronicle one is installed (loaded or not).

    The tip suggests Gigai Chronicle. A user with any other history provider
    (Karni's ADR provider or historian, or someone else's) has chosen one.
    """
    # bench row "karni check" runs without it
    from karni.agent.common.names import normalize_name
    from karni.agent.history import BUILTIN_PROVIDERS

    builtin = {normalize_name(distribution) for _, distribution in BUILTIN_PROVIDERS.values()}
    if any(not installed.builtin for installed in discovery.providers):
        return True
    return any(
        failure.distribution and normalize_name(failure.distribution) not in builtin
        for failure in discovery.failures
    )


def _recorded_as_shown(root: str) -> bool:
    """Whether the state file already records the tip, read without the lock.

    Most runs come after the tip was shown once, and taking the lock (with
    ``fcntl``) and the rest of the check cost more than the rest of
    ``karni doctor``. A record found is enough to say no: it is never
    removed. Not finding it falls through to the locked check.
    """
    return bool(read_state(root).get(STATE_KEY))


def offer_tip(
    root: str,
    stream: TextIO,
    *,
    quiet: bool,
    discovery: Discovery | None = None,
    detected: list[str] | None = None,
) -> bool:
    """Write :data:`TIP` to ``stream`` if nothing suppresses it and it was never shown.

    Returns:
        Whether the tip was written.
    """
    if _recorded_as_shown(root):
        return False
    if suppressed_by(root, quiet=quiet, discovery=discovery, detected=detected) is not None:
        return False

    if not claim_once(root, STATE_KEY):
        return False
    stream.write(TIP)
    stream.flush()
    return True
