"""The OpenCode plugin and the Pi extension: small JavaScript modules that call Karni.

Both are plain JavaScript (no type annotations), so OpenCode (Bun), Pi (jiti)
and Node all load them as they are. They only forward their host's events to
``karni hook <agent> <event>`` and hand Karni's answer back through the
host's API; every decision is made in Python. A generated file carries
:data:`MARKER`, which is how install and uninstall know it is Karni's.
"""

from __future__ import annotations

import os

from karni.cli.hooks.events import edit_tools

__all__ = ["FILE_NAME", "MARKER", "is_generated", "script"]

FILE_NAME = "karni-history.js"
"""The generated file's name, in the harness's plugin or extension folder."""

MARKER = "// karni-hooks: generated"
"""The line that marks a file as Karni's."""

_TITLES = {"opencode": "OpenCode plugin", "pi": "Pi extension"}


def _template(name: str) -> str:
    path = os.path.join(os.path.dirname(__file__), "templates", name)
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def script(agent: str, before_edit: str, share: bool = False) -> str:
    """The generated module for ``agent`` (``opencode`` or ``pi``)."""
    # bench row "karni doctor" runs without it
    import json

    header = (
        f"// Karni's history hooks, as an {_TITLES[agent]}: written by"
        f" `karni hooks install --agent {agent}`.\n"
        f"// `karni hooks uninstall --agent {agent}` removes it; edits are lost on reinstall.\n"
        f"{MARKER}\n"
        'import { spawn } from "node:child_process";\n\n'
    )
    shared = (
        _template("ask_karni.js")
        .replace("__BEFORE_EDIT__", json.dumps(before_edit))
        .replace("__EDIT_TOOLS__", json.dumps(edit_tools(agent)))
        .replace("__SHARE__", json.dumps(share))
    )
    return header + shared + "\n" + _template(f"{agent}.js")


def is_generated(text: str) -> bool:
    """Whether ``text`` is a file Karni generated."""
    return MARKER in text.split("\n", 5)[:5]
