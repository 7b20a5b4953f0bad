"""Distribution names in their normal form, so ``Karni_Core`` and ``karni-core`` compare equal."""

from __future__ import annotations

__all__ = ["normalize_name"]


def normalize_name(name: str) -> str:
    """``name`` lower-cased, each run of ``-``, ``_`` and ``.`` made one ``-`` (PEP 503)."""
    out: list[str] = []
    for char in name.lower():
        if char in "-_.":
            if not out or out[-1] != "-":
                out.append("-")
        else:
            out.append(char)
    return "".join(out)
