"""Subprocess environments that neither the caller's pip set-up nor CI can leak into."""

from __future__ import annotations

import os
import shutil
import subprocess

from karni.agent.common.ci import CI_VARIABLES

_DROPPED_PREFIXES = ("PIP_", "PIPX_", "UV_", "KARNI_", "PYTHON", "VIRTUAL_ENV", "CONDA")
_KEPT = frozenset({"UV_CACHE_DIR", "UV_PYTHON_INSTALL_DIR"})
"""Where uv keeps its wheels and interpreters: offline builds and installs read them."""


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without pip, pipx, uv, Python, Karni or CI settings.

    This machine's pip configuration can fake "offline" (a global find-links and
    extra index), and CI variables change Karni's output (the
    one-time tip), so none of them leak into a test. uv's cache and interpreter
    folders are kept: offline builds and installs take hatchling, pytest and
    syrupy from the cache that ``uv sync`` filled, wherever it is. Output is
    made stable with ``NO_COLOR``, ``COLUMNS`` and a UTF-8 locale.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if key in _KEPT or not (key.startswith(_DROPPED_PREFIXES) or key in CI_VARIABLES)
    }
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        PYTHONDONTWRITEBYTECODE="1",
        NO_COLOR="1",
        COLUMNS="80",
        LINES="24",
        LC_ALL="C.UTF-8",
    )
    env.update(extra)
    return env


def home_env(home: os.PathLike[str] | str, **extra: str) -> dict[str, str]:
    """The caller's environment, with HOME, configuration and caches in ``home``, for a command.

    No CI variable (they change Karni's output), no ``KARNI_*`` setting and no
    ``PYTEST_*`` variable of the caller's reaches the command; output is kept
    stable with ``NO_COLOR`` and ``TZ=UTC``. ``extra`` comes last.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in CI_VARIABLES and not key.startswith(("KARNI_", "PYTEST_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=os.path.join(home, "config"),
        KARNI_CACHE_DIR=os.path.join(home, "cache"),
        NO_COLOR="1",
        TZ="UTC",
    )
    env.update(extra)
    return env


def offline_prefix() -> list[str]:
    """``["unshare", "-rn"]`` when a private network namespace is allowed here, else ``[]``.

    Inside it nothing can reach the network. Where the kernel forbids it (e.g.
    GitHub's Ubuntu runners restrict user namespaces) the calls stay offline
    by their own arguments: ``--no-index`` and no pip configuration.
    """
    unshare = shutil.which("unshare")
    if unshare:
        probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, check=False)
        if probe.returncode == 0:
            return [unshare, "-rn"]
    return []
