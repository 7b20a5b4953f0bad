r"""The timeline page itself: one self-contained HTML file, its data embedded as inert JSON.

The page must open from a ``file://`` URL with no network, so its style and
script are inline (kept as files beside this module, ``timeline_assets/``)
and a Content-Security-Policy lets nothing else load or run: no connection,
no other script or style than these two, whose SHA-256 it names.

Transcript text is untrusted, and none of it is ever parsed as HTML: the data
goes into a ``<script type="application/json">`` block, which the browser
never runs, with every ``<``, ``>`` and ``&`` (and U+2028/U+2029, which some
JavaScript parsers take for line ends) written as a JSON ``\u`` escape, so
no ``</script>`` or comment opener can appear in it; the script builds the
page with ``textContent`` only. The one text in the HTML around it, the
title, is HTML-escaped (``docs/historian/timeline.md``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ASSETS", "embedded_json", "timeline_html"]

ASSETS = Path(__file__).with_name("timeline_assets")
"""The folder of the page's template, style and script."""

_PLACEHOLDER = re.compile(r"\{\{(POLICY|TITLE|STYLE|DATA|SCRIPT)\}\}")
"""Where the template takes each part of the page."""

_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def embedded_json(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script type="application/json">`` element.

    ``JSON.parse`` reads it back unchanged; the text holds no ``<``, ``>``
    or ``&``, so nothing in it can end the element or open a comment.
    """
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_ESCAPES)


def _source_hash(text: str) -> str:
    """The CSP source naming an inline element whose text is ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def timeline_html(data: dict[str, Any]) -> str:
    """The page for ``data`` (:func:`karni_historian.brief.timeline.timeline_data`)."""
    style = "\n" + _asset("timeline.css")
    script = "\n" + _asset("timeline.js")
    policy = (
        "default-src 'none'; "
        f"style-src {_source_hash(style)}; script-src {_source_hash(script)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    project = str(data.get("project") or "project")
    values = {
        "POLICY": html.escape(policy, quote=False).replace('"', "&quot;"),
        "TITLE": html.escape(f"{project}: agent history timeline"),
        "STYLE": style,
        "DATA": embedded_json(data),
        "SCRIPT": script,
    }
    # One pass over the template: a placeholder's name inside the data is data, never filled.
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], _asset("timeline.html"))
