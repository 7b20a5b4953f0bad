"""Ships the repository's example project inside the karni-cli wheel.

``karni new NAME --example`` creates the bundled example project, and its one
copy is the repository's ``examples/eventsite``. This build hook carries it into
the sdist as ``examples/eventsite`` (so a wheel built from the sdist has it too)
and into the wheel as ``karni/cli/templates/example/``, encoded like the project
template that ``karni.cli.scaffold`` reads: every file name ends in ``.tmpl`` and
a path part ``.x`` becomes ``dot-x``, so no installer, linter or type checker
takes the example's Python files for the package's own modules. Editable
installs get nothing: there the scaffold reads the checkout's folder itself.
"""

from __future__ import annotations

import os
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

EXAMPLE = os.path.join("examples", "eventsite")
WHEEL_FOLDER = "karni/cli/templates/example"
LOCAL_STATE = os.path.join(".karni", "local")
"""Karni's per-machine state, never part of a project's files."""


def example_files(folder: str) -> list[str]:
    """The example's files, relative to ``folder``, without caches or local state."""
    found = []
    for parent, subfolders, filenames in os.walk(folder):
        relative_parent = os.path.relpath(parent, folder)
        subfolders[:] = sorted(
            name
            for name in subfolders
            if name != "__pycache__"
            and os.path.normpath(os.path.join(relative_parent, name)) != LOCAL_STATE
        )
        found += [
            os.path.normpath(os.path.join(relative_parent, name))
            for name in sorted(filenames)
            if not name.endswith((".pyc", ".pyo"))
        ]
    return found


def encoded(relative: str) -> str:
    """``.cursor/rules/karni.mdc`` → ``dot-cursor/rules/karni.mdc.tmpl``."""
    parts = ["dot-" + part[1:] if part.startswith(".") else part for part in relative.split(os.sep)]
    return "/".join(parts) + ".tmpl"


class ExampleHook(BuildHookInterface):
    """Adds the example project to the sdist and the wheel."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Force-include every file of the example, where this target wants it."""
        if self.target_name == "wheel" and version == "editable":
            return
        source = self._example_folder()
        for relative in example_files(source):
            if self.target_name == "sdist":
                target = os.path.join(EXAMPLE, relative).replace(os.sep, "/")
            else:
                target = f"{WHEEL_FOLDER}/{encoded(relative)}"
            build_data["force_include"][os.path.join(source, relative)] = target

    def _example_folder(self) -> str:
        """``examples/eventsite`` of the sdist being built from, else of the repository."""
        for candidate in (
            os.path.join(self.root, EXAMPLE),
            os.path.join(self.root, os.pardir, os.pardir, EXAMPLE),
        ):
            if os.path.isfile(os.path.join(candidate, "manage.py")):
                return os.path.normpath(candidate)
        raise RuntimeError(
            f"karni-cli: no {EXAMPLE} beside the package or two folders up from {self.root}; "
            f"build from the repository or from the sdist, which carries it"
        )
