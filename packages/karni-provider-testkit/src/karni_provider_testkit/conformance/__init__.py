"""The parts of the conformance suite, one module per concern; nothing is imported here.

:mod:`~karni_provider_testkit.conformance.base` (what a test class sets and
implements, the fixtures), :mod:`~karni_provider_testkit.conformance.detection`,
:mod:`~karni_provider_testkit.conformance.calls`,
:mod:`~karni_provider_testkit.conformance.briefs` and
:mod:`~karni_provider_testkit.conformance.installation`. Authors subclass
:class:`karni_provider_testkit.ProviderContract`, which brings them together.
"""
