"""Package attributes imported on first use.

The testkit's packages re-export names from their modules, but importing
them all would make loading the pytest plugin, or starting the Chronicle
double, pay for everything. A package calls :func:`lazy_attributes` once and
gets the module-level ``__getattr__`` and ``__dir__`` (PEP 562) that import a
name's module only when the name is first asked for.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, where: Mapping[str, str], exported: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package with lazily imported names.

    Args:
        package: The package's ``__name__``.
        where: Each name → the module holding it, relative to ``package``
            (``".runner"``, ``"..plugin"``).
        exported: The package's ``__all__``.
    """

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        return getattr(importlib.import_module(module, package), name)

    def __dir__() -> list[str]:
        import sys

        return sorted({*vars(sys.modules[package]), *exported})

    return __getattr__, __dir__
