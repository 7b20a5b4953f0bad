"""The pytest plugin of karni-provider-testkit: fixtures for provider authors.

Loaded through the ``pytest11`` entry point. Switch it off with
``-p no:karni_provider_testkit``.
"""
