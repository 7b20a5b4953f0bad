"""A local, model-free historian for coding-agent transcripts.

The package root stays import-light because the history provider runs on the
hot path of ``karni context``: :class:`Compartment`, a documented public name
whose home is :mod:`karni_historian.model`, is re-exported lazily (the model
module needs :mod:`dataclasses`, which costs ~20 ms of imports), so
``import karni_historian`` itself loads nothing beyond this file.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.model import Compartment

__all__ = ["Compartment"]


def __getattr__(name: str) -> object:
    """Load :class:`Compartment` from :mod:`karni_historian.model` on first use."""
    if name == "Compartment":
        # bench row "karni doctor" runs without it
        from karni_historian.model import Compartment

        return Compartment
    raise AttributeError(f"module 'karni_historian' has no attribute {name!r}")
