"""karni-cli's own settings, declared for ``karni config``, ``karni check`` and the reference.

Named by karni-cli's ``karni.settings`` entry point; see
``docs/reference/configuration.md`` for every package's settings.
"""

from __future__ import annotations

from karni.agent.common.settings import BOTH, Boolean, Setting

__all__ = ["SETTINGS"]

SETTINGS = (
    Setting(
        "suggest_tools",
        Boolean(),
        "offer the one-time tip about prompt-history tools (karni doctor, karni check)",
        default=True,
        scope=BOTH,
    ),
)
"""Every setting karni-cli reads."""
