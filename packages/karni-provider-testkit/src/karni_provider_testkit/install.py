"""Registering a provider for one test through a real entry point.

Karni finds providers only through the ``karni.history_providers`` entry-point
group, so the honest way to test discovery is a real registration: this module
writes a minimal ``*.dist-info`` folder (``METADATA`` and ``entry_points.txt``)
into a temporary directory and puts that directory on ``sys.path`` (for this
process) and on ``PYTHONPATH`` (for ``karni`` subprocesses), then removes all
of it again.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["ProviderInstallation", "entry_point_value", "installed_provider"]

ENTRY_POINT_GROUP = "karni.history_providers"


@dataclass(frozen=True)
class ProviderInstallation:
    """A provider registered for the duration of one test."""

    name: str
    """The entry-point name (what ``KARNI_HISTORY_PROVIDERS`` selects)."""

    value: str
    """The entry-point value, ``module:attribute``."""

    distribution: str
    """The name of the fake distribution that declares the entry point."""

    version: str
    """The fake distribution's version."""

    site_dir: Path
    """The folder holding the ``*.dist-info``; it is on ``sys.path`` and ``PYTHONPATH``."""

    import_roots: tuple[Path, ...]
    """Extra folders put on ``PYTHONPATH`` so subprocesses can import ``value``."""


def entry_point_value(target: Any) -> str:
    """The ``module:attribute`` string that names ``target``.

    Args:
        target: A ``"module:attribute"`` string, or a class, factory or
            instance defined at the top level of an importable module.

    Raises:
        TypeError: ``target`` cannot be named by an entry point (for example
            a class defined inside a function, or an instance no module
            attribute refers to).
    """
    if isinstance(target, str):
        if ":" not in target:
            raise TypeError(
                f"entry-point value `{target}` needs the form `module:attribute`; "
                f"for example `my_history.karni_provider:MyHistoryProvider`"
            )
        return target
    qualname = getattr(target, "__qualname__", None)
    module_name = getattr(target, "__module__", None)
    if isinstance(target, type) or (callable(target) and qualname):
        if not module_name or not qualname or "<locals>" in qualname:
            raise TypeError(
                f"`{qualname or target!r}` is not importable by name: define it at the top "
                f"level of a module, or pass `module:attribute` as a string"
            )
        return f"{module_name}:{qualname}"
    module_name = type(target).__module__
    module = sys.modules.get(module_name)
    for attribute, value in vars(module).items() if module else ():
        if value is target:
            return f"{module_name}:{attribute}"
    raise TypeError(
        f"the provider instance {target!r} is not a module-level attribute; assign it to "
        f"a module-level name, or pass its class, a factory or `module:attribute`"
    )


def _import_root(value: str) -> Path | None:
    """The folder a fresh interpreter needs on its path to import ``value``'s module."""
    module_name = value.split(":", 1)[0].strip()
    module = sys.modules.get(module_name)
    filename = getattr(module, "__file__", None)
    if not filename:
        return None
    path = Path(filename).resolve()
    parts = module_name.split(".")
    depth = len(parts) if path.stem == "__init__" else len(parts) - 1
    root = path.parent
    for _ in range(depth):
        root = root.parent
    module_path = root.joinpath(*parts)
    expected = (
        module_path / path.name if path.stem == "__init__" else module_path.with_name(path.name)
    )
    return root if expected == path else None


def _distribution_folder(distribution: str, version: str) -> str:
    return f"{distribution.replace('-', '_')}-{version}.dist-info"


def write_distribution(
    site_dir: Path, name: str, value: str, distribution: str, version: str
) -> Path:
    """Write a ``*.dist-info`` declaring one ``karni.history_providers`` entry point.

    Returns:
        The ``*.dist-info`` folder.
    """
    folder = site_dir / _distribution_folder(distribution, version)
    folder.mkdir(parents=True, exist_ok=False)
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
    )
    (folder / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n{name} = {value}\n", encoding="utf-8"
    )
    (folder / "INSTALLER").write_text("karni-provider-testkit\n", encoding="utf-8")
    (folder / "RECORD").write_text("", encoding="utf-8")
    return folder


@contextmanager
def installed_provider(
    target: Any,
    site_dir: Path,
    *,
    name: str | None = None,
    distribution: str | None = None,
    version: str = "0.0.0",
    cache_dir: Path | None = None,
) -> Iterator[ProviderInstallation]:
    """Register ``target`` as a history provider until the ``with`` block ends.

    While the block runs, ``site_dir`` (holding the new ``*.dist-info``) is
    first on ``sys.path`` and on ``PYTHONPATH``, the folder needed to import
    ``target``'s module is on ``PYTHONPATH`` too, and ``KARNI_CACHE_DIR`` points
    at ``cache_dir`` (default: a folder inside ``site_dir``) so the entry-point
    cache of the person running the tests is never touched. Everything is
    restored afterwards, and the ``*.dist-info`` is deleted.

    Args:
        target: A ``"module:attribute"`` string, or a provider class, factory
            or module-level instance.
        site_dir: An empty (or missing) folder to write the distribution into.
        name: The entry-point name; by default ``target.name``.
        distribution: The fake distribution's name; by default
            ``karni-testkit-<name>``.
        version: The fake distribution's version.
        cache_dir: Where Karni may cache entry points meanwhile.

    Raises:
        TypeError: ``target`` cannot be named by an entry point, or it has no
            string ``name`` and none was given.
    """
    value = entry_point_value(target)
    if name is None:
        name = getattr(target, "name", None) if not isinstance(target, str) else None
        if not isinstance(name, str) or not name.strip():
            raise TypeError(
                f"cannot tell the provider name of `{value}`: pass `name=` to install_provider"
            )
    distribution = distribution or f"karni-testkit-{name}"
    site_dir = Path(site_dir).absolute()
    site_dir.mkdir(parents=True, exist_ok=True)
    dist_info = write_distribution(site_dir, name, value, distribution, version)
    root = _import_root(value)
    import_roots = (root,) if root is not None and str(root) not in sys.path else ()
    cache_dir = Path(cache_dir) if cache_dir is not None else site_dir / ".karni-cache"

    saved = {key: os.environ.get(key) for key in ("PYTHONPATH", "KARNI_CACHE_DIR")}
    python_path = [str(site_dir), *(str(path) for path in import_roots)]
    if saved["PYTHONPATH"]:
        python_path.append(saved["PYTHONPATH"])
    os.environ["PYTHONPATH"] = os.pathsep.join(python_path)
    os.environ["KARNI_CACHE_DIR"] = str(cache_dir)
    sys.path.insert(0, str(site_dir))
    import importlib

    importlib.invalidate_caches()
    try:
        yield ProviderInstallation(name, value, distribution, version, site_dir, import_roots)
    finally:
        try:
            sys.path.remove(str(site_dir))
        except ValueError:
            pass
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        import shutil

        shutil.rmtree(dist_info, ignore_errors=True)
        importlib.invalidate_caches()
