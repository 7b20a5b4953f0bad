"""Helpers of the integration suite (artifacts, interpreters, environments, pipx).

Kept in a package of their own because ``--import-mode=importlib`` does not let
test modules import ``conftest``; ``conftest.py`` puts this folder on
``sys.path``.
"""
