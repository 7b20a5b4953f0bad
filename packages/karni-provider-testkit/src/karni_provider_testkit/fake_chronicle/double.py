"""``FakeChronicle``: one test's double, its installed ``chronicle``, settings and call log.

A test (or the ``fake_chronicle`` fixture) makes one per test in a folder of
its own: :meth:`FakeChronicle.install` writes the ``chronicle`` script,
:meth:`~FakeChronicle.configure` changes how the next runs behave,
:meth:`~FakeChronicle.calls` reads back what ran, and
:meth:`~FakeChronicle.create_store` / :meth:`~FakeChronicle.example_store`
make stores for it to find.
"""

from __future__ import annotations

import json
import os
import sys

from karni.agent.common.files import write_atomic

from karni_provider_testkit.fake_chronicle.calls import CALLS_FILE, ChronicleCall, read_calls
from karni_provider_testkit.fake_chronicle.config import (
    CONFIG_FILE,
    CONFIG_KEYS,
    HOME_VARIABLE,
    load_config,
)
from karni_provider_testkit.fake_chronicle.formats import FIRST_TS, ms, ulid
from karni_provider_testkit.fake_chronicle.store import FakeStore

__all__ = ["EXAMPLE_FIXTURE", "FakeChronicle"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from pathlib import Path
    from typing import Any

EXAMPLE_FIXTURE = "example.json"
"""The store fixture behind the contract's examples, beside this module."""


class FakeChronicle:
    """The double's home: its installed ``chronicle``, configuration and call log.

    Args:
        home: A folder of its own (created if needed); keep it outside any
            fake store, or the double's walk-up could find the wrong store.
    """

    CONFIG_KEYS = CONFIG_KEYS

    def __init__(self, home: str | os.PathLike[str]) -> None:
        """Use ``home`` for the bin folder, ``config.json`` and ``calls.jsonl``."""
        from pathlib import Path

        self.home = Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.bin_dir = self.home / "bin"
        self.config_path = self.home / CONFIG_FILE
        self.log_path = self.home / CALLS_FILE

    def install(
        self, bin_dir: str | os.PathLike[str] | None = None, name: str = "chronicle"
    ) -> Path:
        """Write an executable ``name`` that runs the double with this interpreter.

        It is a POSIX shell script that sets ``FAKE_CHRONICLE_HOME`` and
        replaces itself (``exec``) with the interpreter, so the pid a caller
        sees is the double's own.

        Returns:
            The script's path (in ``bin_dir``, default ``home/bin``).
        """
        import shlex
        from pathlib import Path

        folder = Path(bin_dir) if bin_dir is not None else self.bin_dir
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / name
        text = (
            "#!/bin/sh\n"
            "# Gigai Chronicle's double, written by karni_provider_testkit.FakeChronicle.\n"
            f"{HOME_VARIABLE}={shlex.quote(str(self.home))}\n"
            f"export {HOME_VARIABLE}\n"
            f"exec {shlex.quote(sys.executable)} -P -m karni_provider_testkit.fake_chronicle"
            ' "$@"\n'
        )
        write_atomic(str(script), text)
        script.chmod(0o755)
        return script

    def path_with_bin(self, path: str | None = None) -> str:
        """``PATH`` (default: the current one) with the double's bin folder first."""
        current = os.environ.get("PATH", "") if path is None else path
        return os.pathsep.join(part for part in (str(self.bin_dir), current) if part)

    def create_store(self, folder: str | os.PathLike[str]) -> FakeStore:
        """Create an empty store (``folder/.chronicle/`` as ``chronicle init`` would)."""
        store = FakeStore(folder)
        store.chronicle_dir.mkdir(parents=True, exist_ok=True)
        config = store.chronicle_dir / "config.json"
        if not config.exists():
            identity = {"id": "prj_" + ulid(ms(FIRST_TS), str(folder)), "name": "fake"}
            text = json.dumps({"version": 1, "project": identity}, indent=2) + "\n"
            write_atomic(str(config), text)
            write_atomic(str(store.chronicle_dir / ".gitignore"), ".cache/\n.local/\n")
        return store

    def example_store(self, folder: str | os.PathLike[str]) -> FakeStore:
        """Create the store behind the contract's examples (docs/chronicle-contract.md).

        ``context src/session/cache.ts`` gives example (a),
        ``context src/session/store.ts`` example (b) and
        ``context src/api/client.py`` example (c), each with ``--limit 5``.
        """
        from pathlib import Path

        store = self.create_store(folder)
        source = Path(__file__).with_name(EXAMPLE_FIXTURE)
        store.write(json.loads(source.read_text(encoding="utf-8")))
        return store

    def configure(self, **options: Any) -> None:
        """Change how the next runs behave (the keys of ``config.json``; see the package docs).

        A value of None removes that setting.

        Raises:
            TypeError: For a key the double does not know.
        """
        unknown = sorted(set(options) - self.CONFIG_KEYS)
        if unknown:
            raise TypeError(
                f"FakeChronicle.configure: unknown setting {unknown[0]!r}; "
                f"use one of {sorted(self.CONFIG_KEYS)}"
            )
        config = self.config()
        for key, value in options.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        write_atomic(str(self.config_path), json.dumps(config, ensure_ascii=False) + "\n")

    def config(self) -> dict[str, Any]:
        """The current settings."""
        return load_config(self.home)

    def reset(self) -> None:
        """Forget every setting and every recorded call."""
        for path in (self.config_path, self.log_path):
            path.unlink(missing_ok=True)

    def calls(self) -> list[ChronicleCall]:
        """Every run recorded since the last :meth:`reset`, oldest first."""
        return read_calls(self.home)

    def run(
        self, *arguments: str, cwd: str | os.PathLike[str], timeout: float = 30.0
    ) -> subprocess.CompletedProcess[bytes]:
        """Run the installed ``chronicle`` (see :meth:`install`) and capture its output."""
        import subprocess

        return subprocess.run(
            [str(self.bin_dir / "chronicle"), *arguments],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
