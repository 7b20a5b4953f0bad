"""Karni's history providers: discovery, safe calls and composition under the cap.

A history provider reads a prompt-history store kept beside a project and
returns a short brief of what was asked and decided about one file. This
package finds the installed providers (the ``karni.history_providers``
entry-point group), calls them so they can never break Karni's output, and
composes their briefs under the shared ~300-token cap::

    from pathlib import Path
    from karni.agent.history import compose

    print(compose(Path("."), "apps/events/models.py", providers=[MyHistoryProvider()]))

Only the standard library is used, and imports are kept lean: this runs
before every edit an agent makes.
"""

from __future__ import annotations

import sys

from karni.agent.history.cap import CHARS_PER_TOKEN, HISTORY_TOKEN_CAP, estimate_tokens
from karni.agent.history.compose import (
    compose,
    detect,
    detecting_providers,
    named_providers,
)
from karni.agent.history.discovery import (
    BUILTIN_PROVIDERS,
    ENTRY_POINT_GROUP,
    Discovery,
    InstalledProvider,
    LoadFailure,
    discover,
    provider_name,
)

__all__ = [
    "BUILTIN_PROVIDERS",
    "CHARS_PER_TOKEN",
    "DEFAULT_PROVIDER_TIMEOUT",
    "ENTRY_POINT_GROUP",
    "HISTORY_TOKEN_CAP",
    "Discovery",
    "DuplicateProviderError",
    "HistoryError",
    "HistoryProvider",
    "InstalledProvider",
    "LoadFailure",
    "NotAProviderError",
    "ProviderCallOutcome",
    "ProviderImportError",
    "ProviderLoadError",
    "UnknownProviderError",
    "call_isolated",
    "compose",
    "detect",
    "detecting_providers",
    "discover",
    "doctor_notes",
    "estimate_tokens",
    "named_providers",
    "provider_name",
    "store_problem",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.agent.history.errors import (
        DuplicateProviderError,
        HistoryError,
        NotAProviderError,
        ProviderImportError,
        ProviderLoadError,
        UnknownProviderError,
    )
    from karni.agent.history.health import doctor_notes, store_problem
    from karni.agent.history.isolation import (
        DEFAULT_PROVIDER_TIMEOUT,
        ProviderCallOutcome,
        call_isolated,
    )
    from karni.agent.history.protocol import HistoryProvider

_LAZY = {
    "DuplicateProviderError": "errors",
    "HistoryError": "errors",
    "NotAProviderError": "errors",
    "ProviderImportError": "errors",
    "ProviderLoadError": "errors",
    "UnknownProviderError": "errors",
    "DEFAULT_PROVIDER_TIMEOUT": "isolation",
    "ProviderCallOutcome": "isolation",
    "call_isolated": "isolation",
    "HistoryProvider": "protocol",
    "store_problem": "health",
    "doctor_notes": "health",
}
"""Names loaded on first use: a run with no store needs neither the errors nor the
isolated call, and the typing-only protocol imports `typing`."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{module}")
    return getattr(sys.modules[f"{__name__}.{module}"], name)
