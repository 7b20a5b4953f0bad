from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("KARNI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    variables = (
        "KARNI_AGENT_CONDITIONS",
        "KARNI_HISTORY_PROVIDERS",
        "KARNI_PROVIDER_TIMEOUT",
        "KARNI_TRUST_PROJECT",
    )
    for variable in variables:
        monkeypatch.delenv(variable, raising=False)


class SitePackages:
    """A folder on sys.path where tests install real dist-info directories and modules."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def module(self, name: str, source: str) -> None:
        path = self.root / Path(*name.split("."))
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / f"{path.name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        sys.modules.pop(name, None)

    def distribution(
        self, name: str, version: str, entry_points: dict[str, dict[str, str]]
    ) -> Path:
        folder = self.root / f"{name.replace('-', '_')}-{version}.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        sections = []
        for group, entries in entry_points.items():
            lines = "".join(f"{key} = {value}\n" for key, value in entries.items())
            sections.append(f"[{group}]\n{lines}")
        (folder / "entry_points.txt").write_text("\n".join(sections), encoding="utf-8")
        return folder


def _plant(path: Path, kind: str, content: bytes, elsewhere: Path) -> None:
    """Put a ``link`` to ``elsewhere`` (holding ``content``) or a ``fifo`` in ``path``'s place."""
    elsewhere.write_bytes(content)
    path.unlink()
    if kind == "link":
        path.symlink_to(elsewhere)
    else:
        os.mkfifo(path)


@pytest.fixture
def plant():
    """:func:`_plant`: a link or a FIFO in a cache file's place."""
    return _plant


@pytest.fixture
def site(tmp_path, monkeypatch) -> SitePackages:
    root = tmp_path / "site-packages"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return SitePackages(root)


# Providers the tests compose with; reach them through the `kinds` fixture.


class Static:
    """Detects a store and returns a fixed brief."""

    def __init__(self, name="static", brief="a brief", project=None, command=None, detect=True):
        self.name = name
        self._brief = brief
        self._project = project
        self._command = command
        self._detect = detect
        self.calls: list[tuple] = []

    def detect(self, project_root):
        self.calls.append(("detect", project_root))
        return self._detect

    def context(self, project_root, path):
        self.calls.append(("context", project_root, path))
        return self._brief

    def project_context(self, project_root):
        self.calls.append(("project_context", project_root))
        return self._project

    def full_command(self, project_root, path):
        self.calls.append(("full_command", project_root, path))
        return self._command


class NoProjectContext:
    name = "plain"

    def detect(self, project_root):
        return True

    def context(self, project_root, path):
        return "only per file"


class Noisy(Static):
    """Writes to every channel it can reach, then answers."""

    def context(self, project_root, path):
        print("python-level stdout")
        print("python-level stderr", file=sys.stderr)
        os.write(1, b"fd 1 bytes\n")
        os.write(2, b"fd 2 bytes\n")
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import os; os.write(1, b'child fd 1\\n'); os.write(2, b'child fd 2\\n')",
            ],
            check=True,
        )
        return "quiet brief"


class Raising(Static):
    def __init__(self, failing: str, **kwargs):
        super().__init__(**kwargs)
        self.failing = failing

    def detect(self, project_root):
        if self.failing == "detect":
            raise RuntimeError("detect exploded")
        return True

    def context(self, project_root, path):
        if self.failing == "context":
            raise RuntimeError("context exploded")
        return super().context(project_root, path)

    def project_context(self, project_root):
        if self.failing == "project_context":
            raise RuntimeError("project_context exploded")
        return super().project_context(project_root)

    def full_command(self, project_root, path):
        if self.failing == "full_command":
            raise RuntimeError("full_command exploded")
        return super().full_command(project_root, path)


class Hanging(Static):
    def __init__(self, seconds: float, **kwargs):
        super().__init__(**kwargs)
        self.seconds = seconds

    def context(self, project_root, path):
        time.sleep(self.seconds)
        print("too late")
        os.write(1, b"too late on fd 1\n")
        return "late brief"


@pytest.fixture
def kinds():
    return types.SimpleNamespace(
        Static=Static,
        NoProjectContext=NoProjectContext,
        Noisy=Noisy,
        Raising=Raising,
        Hanging=Hanging,
    )
