"""Karni's settings and per-project local state.

:mod:`~karni.cli.config.settings` (what may be set, and reading it),
:mod:`~karni.cli.config.editing` (``karni config set``: changing one line) and
:mod:`~karni.cli.config.state` (``.karni/local/state.json``). Where the files
live and how TOML is read is karni-core's (:mod:`karni.agent.common.config`).
Nothing is imported here.
"""
