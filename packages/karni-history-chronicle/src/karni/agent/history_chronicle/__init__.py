"""The Karni history provider for Gigai Chronicle.

``ChronicleProvider`` is registered under the ``karni.history_providers``
entry point ``gigai-chronicle``. Importing this package is cheap (it runs
before every edit an agent makes): the modules that start ``chronicle`` and
read its JSON are imported only when a brief is asked for.
"""

from __future__ import annotations

from karni.agent.history_chronicle.provider import ChronicleProvider

__all__ = ["ChronicleProvider"]
