"""Which provider distributions are Karni's own, kept in one place.

A provider published from another distribution is "third-party": when one is
installed, the user has already chosen a history tool, so Karni never suggests
one (see :mod:`karni.cli.tip`). ``karni doctor`` marks them too.
"""

from __future__ import annotations

from karni.agent.common.names import normalize_name

__all__ = ["OWN_PROVIDER_DISTRIBUTIONS", "is_third_party"]

OWN_PROVIDER_DISTRIBUTIONS = frozenset(
    {"karni-history-chronicle", "karni-history-adr", "karni-historian"}
)
"""The provider distributions published from Karni's own repository (normalized names)."""


def is_third_party(distribution: str | None) -> bool:
    """Whether a provider from ``distribution`` is someone else's.

    ``None`` (no distribution known, e.g. a name in ``KARNI_HISTORY_PROVIDERS``
    that is not installed) is not a provider at all, so it is not third-party.
    """
    if not distribution:
        return False

    return normalize_name(distribution) not in OWN_PROVIDER_DISTRIBUTIONS
