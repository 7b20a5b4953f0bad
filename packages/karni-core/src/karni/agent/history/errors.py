"""Karni's history errors: one hierarchy, so callers can catch what they mean.

Nothing in karni-core raises these at a caller during composition: a provider
that fails to load is *recorded* (see :class:`~karni.agent.history.LoadFailure`)
with one of these as its ``error``, for ``karni doctor`` to show.
"""

from __future__ import annotations

from karni.agent.common.errors import KarniCoreError

__all__ = [
    "DuplicateProviderError",
    "HistoryError",
    "NotAProviderError",
    "ProviderExitError",
    "ProviderImportError",
    "ProviderLoadError",
    "UnknownProviderError",
]


class HistoryError(KarniCoreError):
    """The root of every history error (itself a :class:`KarniCoreError`)."""


class ProviderLoadError(HistoryError):
    """A registered history provider could not be turned into a provider object."""


class ProviderImportError(ProviderLoadError):
    """Importing an entry point's module or attribute failed, or its factory raised.

    The original exception is chained as ``__cause__``.
    """


class NotAProviderError(ProviderLoadError):
    """The entry point gave an object without the provider shape.

    A provider needs a non-empty string ``name`` and callable ``detect`` and
    ``context``.
    """


class DuplicateProviderError(ProviderLoadError):
    """Two distributions register the same provider name with different values.

    Neither is loaded: uninstall one of them, or rename one entry point.
    """


class UnknownProviderError(ProviderLoadError):
    """``KARNI_HISTORY_PROVIDERS`` names a provider that is not installed."""


class ProviderExitError(ProviderLoadError):
    """A call of the provider ended its process (``os._exit``, a crash, a signal).

    Karni makes the calls in a child process (:mod:`karni.agent.history.child`),
    so only that child ended; ``karni doctor`` lists the provider as failing to
    load when its ``detect`` does this. ``status`` is the exit status, or minus
    the signal's number.
    """

    def __init__(self, status: int, message: str | None = None) -> None:
        """Record how the call's process ended; ``message`` replaces the default text."""
        self.status = status
        super().__init__(message or f"it ended its process ({self.how})")

    @property
    def how(self) -> str:
        """``exit status N`` or ``signal N``."""
        return f"exit status {self.status}" if self.status >= 0 else f"signal {-self.status}"
