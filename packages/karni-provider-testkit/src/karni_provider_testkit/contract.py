"""The conformance suite every Karni history provider should pass.

An author subclasses :class:`ProviderContract` in their own test suite and
implements three methods; pytest then runs every rule of "Writing a provider"
against their provider, and each failure's docstring says what to fix::

    from karni_provider_testkit import ProviderContract
    from my_history.karni_provider import MyHistoryProvider


    class TestMyHistoryProvider(ProviderContract):
        entry_point_name = "my-history"
        distribution = "my-history"

        def make_provider(self):
            return MyHistoryProvider()

        def make_store(self, root):
            (root / ".my-history").mkdir()

        def record(self, root, path, text):
            ...  # write a record about `path` whose brief contains `text`

A conformance test may not be dropped silently: overriding one is an error
unless the override is marked ``@pytest.mark.xfail(reason="...")``.
"""

from __future__ import annotations

from typing import Any

from karni_provider_testkit.conformance.briefs import BriefChecks
from karni_provider_testkit.conformance.calls import CallChecks
from karni_provider_testkit.conformance.detection import DetectionChecks
from karni_provider_testkit.conformance.installation import InstallationChecks

__all__ = ["ProviderContract"]

_CONFORMANCE_TESTS: frozenset[str] = frozenset()


def _has_xfail_with_reason(function: Any) -> bool:
    for mark in getattr(function, "pytestmark", []):
        if getattr(mark, "name", None) == "xfail" and str(mark.kwargs.get("reason") or "").strip():
            return True
    return False


# pytest runs a class's inherited tests base-most first: detection, then the
# calls, the briefs, and last the slow checks through the installed package.
class ProviderContract(InstallationChecks, BriefChecks, CallChecks, DetectionChecks):
    """Base class for a provider's conformance tests.

    Subclass it (with a name starting with ``Test``) and implement
    :meth:`make_provider`, :meth:`make_store` and :meth:`record`. Set
    :attr:`entry_point_name` (and :attr:`distribution`) once the provider's
    package is installed, so the entry-point check runs too. The checks come
    from :mod:`karni_provider_testkit.conformance`, one module per concern.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a subclass that overrides a conformance test without ``xfail(reason=)``."""
        super().__init_subclass__(**kwargs)
        for name in sorted(_CONFORMANCE_TESTS):
            if name in cls.__dict__ and not _has_xfail_with_reason(cls.__dict__[name]):
                raise TypeError(
                    f"{cls.__name__} overrides the conformance test `{name}` of "
                    f"ProviderContract; remove the override, or mark it "
                    f"`@pytest.mark.xfail(reason=...)` saying why the provider cannot pass it"
                )


_CONFORMANCE_TESTS = frozenset(name for name in dir(ProviderContract) if name.startswith("test_"))
