"""The user's journey with pipx, offline, recorded step by step for byte-exact snapshots.

``run_scenario`` installs ``karni-cli`` with pipx from the built wheels, runs
the real ``karni`` from ``PIPX_BIN_DIR`` in copies of the bundled example
project and in a ``karni new`` project, injects ``karni-history-adr``, a
throwaway third-party provider and a deliberately broken one, uninjects them
again, and returns every command's exit status, stdout and stderr.

pipx runs with the **pip backend**, chosen explicitly
(``PIPX_DEFAULT_BACKEND=pip``): it is what pipx uses on a machine without uv,
it is the backend with the offline trap (gotcha G3, fixed by
``--skip-maintenance``), and pip reads no uv configuration from the
workspace. Offline means: a temporary ``PIPX_HOME``/``PIPX_BIN_DIR``/
``PIPX_MAN_DIR``, ``PIP_CONFIG_FILE=/dev/null``, no ``PIP_FIND_LINKS``,
``--pip-args="--no-index --find-links <absolute dist dir>"`` (the folder
shell-quoted inside the value, which pipx splits as a shell would, so a
``TMPDIR`` with a space in it works), and
``unshare -rn`` around pipx where the kernel allows it.

``karni-cli`` and ``karni-history-adr`` go in as the README says, with
``scripts/install`` (:meth:`Journey.install`): run from the repository, its
own wheels taken from the built folder (``KARNI_INSTALL_FROM``, so a release
tests the wheels it uploads), pip offline through its environment
(``PIP_NO_INDEX``, ``PIP_FIND_LINKS`` for ``tomlkit``), pipx's shared
libraries never upgraded (``PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE``) and the
interpreter chosen by ``PIPX_DEFAULT_PYTHON``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from karni_it.environment import clean_env
from karni_it.workspace import EXAMPLES_DIR, ROOT

EXAMPLE = "eventsite"
FILE = "apps/events/models.py"

NOTES_PROVIDER = '''
"""A throwaway third-party provider: notes kept as .notes/<path>.md."""

from pathlib import Path


class NotesProvider:
    name = "notes"

    def detect(self, project_root):
        return (Path(project_root) / ".notes").is_dir()

    def context(self, project_root, path):
        note = Path(project_root) / ".notes" / (path + ".md")
        return note.read_text(encoding="utf-8") if note.is_file() else None

    def project_context(self, project_root):
        note = Path(project_root) / ".notes" / "PROJECT.md"
        return note.read_text(encoding="utf-8") if note.is_file() else None

    def full_command(self, project_root, path):
        return f"cat .notes/{path}.md" if path else "cat .notes/PROJECT.md"
'''

BROKEN_PROVIDER = '''
"""A provider that cannot even be imported."""

raise RuntimeError("acme-history-broken is broken on purpose")
'''


def third_party_project(folder: Path, name: str, entry_name: str, source: str) -> Path:
    """Write a one-module hatchling project registering ``entry_name`` as a provider."""
    module = name.replace("-", "_")
    (folder / module).mkdir(parents=True)
    (folder / module / "__init__.py").write_text(source.lstrip(), encoding="utf-8")
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = ["hatchling>=1.26"]
            build-backend = "hatchling.build"

            [project]
            name = "{name}"
            version = "1.0.0"
            requires-python = ">=3.11"

            [project.entry-points."karni.history_providers"]
            {entry_name} = "{module}:{"NotesProvider" if entry_name == "notes" else "Provider"}"

            [tool.hatch.build.targets.wheel]
            packages = ["{module}"]
            """
        ),
        encoding="utf-8",
    )
    return folder


def notes_store(project: Path) -> None:
    """A ``.notes/`` store with a brief long enough to be cut at the cap."""
    notes = project / ".notes"
    (notes / "apps/events").mkdir(parents=True)
    lines = [f"- note {n}: capacity rule {n} was discussed and kept" for n in range(1, 41)]
    (notes / f"{FILE}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (notes / "PROJECT.md").write_text("- Events are never hard-deleted.\n", encoding="utf-8")


def chronicle_store(project: Path, chronicle_home: Path) -> None:
    """A ``.chronicle/`` store the Chronicle double briefs from (docs/chronicle-contract.md)."""
    from karni_provider_testkit.fake_chronicle import FakeChronicle

    store = FakeChronicle(chronicle_home).create_store(project)
    session = store.add_session(ts="2026-09-30T13:58:00.000Z")
    store.add_prompt(
        "make events soft-deletable instead of hard delete",
        {FILE: (12, 3)},
        session=session,
        ts="2026-09-30T14:02:00.000Z",
    )
    store.add_knowledge("decision", "Soft-delete events; keep payment history.", role="agent")
    store.add_memory(
        "failed_approach",
        "Hard delete with ON DELETE CASCADE — reverted: it destroyed payment history",
        status="active",
        sessions=[session],
    )


@dataclass
class Scenario:
    """One interpreter's run: every step's record, plus what normalising needs."""

    records: dict[str, str] = field(default_factory=dict)
    raw: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    work: Path = Path()
    python_version: str = ""


class Journey:
    """Runs pipx and ``karni`` for one interpreter inside ``work``."""

    def __init__(
        self,
        python: Path,
        dist_dir: Path,
        extra_wheels: dict[str, Path],
        work: Path,
        offline: list[str],
        shared_libs: Path,
        chronicle_home: Path,
        pipx_command: list[str],
        repository: Path = ROOT,
        uv: tuple[str, str] = ("", ""),
        wheels_from: Path | None = None,
    ) -> None:
        """``uv`` is the uv command's folder and its cache; ``wheels_from`` the built wheels
        ``scripts/install`` takes (None: it builds them from ``repository``)."""
        self.pipx_command = pipx_command
        self.repository = repository
        self.uv = uv
        self.wheels_from = wheels_from
        self.chronicle_home = chronicle_home
        self.python = python
        self.dist_dir = dist_dir
        self.extra_wheels = extra_wheels
        self.work = work
        self.offline = offline
        self.bin = work / "pipx-bin"
        self.pip_args = "--pip-args=" + shlex.join(["--no-index", "--find-links", str(dist_dir)])
        self.pipx_env = clean_env(
            PIPX_HOME=str(work / "pipx-home"),
            PIPX_BIN_DIR=str(self.bin),
            PIPX_MAN_DIR=str(work / "pipx-man"),
            PIPX_SHARED_LIBS=str(shared_libs),
            PIPX_DEFAULT_BACKEND="pip",
            HOME=str(work / "home"),
        )
        self.karni_env = clean_env(
            PATH=f"{self.bin}:{chronicle_home / 'bin'}:/usr/bin:/bin",
            HOME=str(work / "home"),
            XDG_CONFIG_HOME=str(work / "xdg-config"),
            XDG_CACHE_HOME=str(work / "xdg-cache"),
            KARNI_CACHE_DIR=str(work / "karni-cache"),
        )
        self.scenario = Scenario(work=work)

    def install_env(self) -> dict[str, str]:
        """What ``scripts/install`` runs with: pipx's folders, offline, this interpreter."""
        shim = self.work / "shim"
        if not shim.is_dir():
            shim.mkdir()
            (shim / "pipx").write_text(
                f'#!/bin/sh\nexec {shlex.join(self.pipx_command)} "$@"\n', encoding="utf-8"
            )
            (shim / "pipx").chmod(0o755)
        uv_folder, uv_cache = self.uv
        env = {
            **self.pipx_env,
            "PATH": f"{shim}:{uv_folder}:/usr/bin:/bin",
            "PYTHON": str(self.python),
            "PIPX_DEFAULT_PYTHON": str(self.python),
            "PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE": "1",
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": self.dist_dir.as_uri(),
            "XDG_DATA_HOME": str(self.work / "data"),
            "UV_OFFLINE": "1",
            "UV_CACHE_DIR": uv_cache,
            "UV_FIND_LINKS": self.dist_dir.as_uri(),
            "UV_TOOL_DIR": str(self.work / "uv-tools"),
            "UV_TOOL_BIN_DIR": str(self.bin),
            "UV_PYTHON": str(self.python),
        }
        if self.wheels_from is not None:
            env["KARNI_INSTALL_FROM"] = str(self.wheels_from)
        return env

    def install(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``scripts/install ARGS``, as a user runs it in the repository."""
        command = [*self.offline, str(self.repository / "scripts" / "install"), *args]
        result = subprocess.run(
            command,
            cwd=self.repository,
            env=self.install_env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"`scripts/install {' '.join(args)}` failed:\n{result.stderr}")
        return result

    def pipx(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [*self.offline, *self.pipx_command, *args]
        result = subprocess.run(
            command, env=self.pipx_env, capture_output=True, text=True, check=False, timeout=300
        )
        if check and result.returncode != 0:
            raise AssertionError(f"`pipx {' '.join(args)}` failed:\n{result.stderr}")
        return result

    def karni(self, step: str, cwd: Path, *args: str) -> tuple[int, str, str]:
        result = subprocess.run(
            [str(self.bin / "karni"), *args],
            cwd=cwd,
            env=self.karni_env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        outcome = (result.returncode, result.stdout, result.stderr)
        assert step not in self.scenario.raw, step
        self.scenario.raw[step] = outcome
        record = f"$ karni {' '.join(args)}\n[exit {result.returncode}]\n{result.stdout}"
        if result.stderr:
            record += f"[stderr]\n{result.stderr}"
        self.scenario.records[step] = record
        return outcome

    def fresh_example(self, name: str) -> Path:
        target = self.work / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(EXAMPLES_DIR / EXAMPLE, target)
        return target

    def fresh_new_project(self, phase: str) -> Path:
        parent = self.work / "new"
        if parent.exists():
            shutil.rmtree(parent)
        parent.mkdir()
        self.karni(f"{phase}/new", parent, "new", "demo")
        return parent / "demo"

    def with_history(self, prefix: str, project: Path) -> None:
        """``karni context --with-history FILE``, then ``--with-history`` alone (the project)."""
        self.karni(f"{prefix}/context-with-history", project, "context", "--with-history", FILE)
        self.karni(f"{prefix}/context-with-history-project", project, "context", "--with-history")

    def plain_steps(self, phase: str) -> None:
        """What must read the same before any injection and after every uninjection."""
        site = self.fresh_example(EXAMPLE)
        self.karni(f"{phase}/version", site, "--version")
        self.karni(f"{phase}/eventsite/context", site, "context")
        self.with_history(f"{phase}/eventsite", site)
        self.karni(f"{phase}/eventsite/rules", site, "rules")
        self.karni(f"{phase}/eventsite/doctor", site, "doctor")
        self.karni(f"{phase}/eventsite/doctor-again", site, "doctor")
        demo = self.fresh_new_project(phase)
        self.karni(f"{phase}/new/context", demo, "context")
        self.karni(f"{phase}/new/context-with-history", demo, "context", "--with-history", FILE)
        self.karni(f"{phase}/new/rules", demo, "rules")
        self.karni(f"{phase}/new/rules-sync-check", demo, "rules", "sync", "--check")
        chron = self.fresh_example("eventsite-chronicle")
        chronicle_store(chron, self.chronicle_home)
        self.with_history(f"{phase}/chronicle", chron)
        self.karni(f"{phase}/chronicle/rules", chron, "rules")
        self.karni(f"{phase}/chronicle/doctor", chron, "doctor")

    def run(self) -> Scenario:
        self.install()
        self.plain_steps("before")

        self.install("karni-history-adr")
        site = self.fresh_example(EXAMPLE)
        self.with_history("adr/eventsite", site)
        self.karni("adr/eventsite/rules", site, "rules")
        self.karni("adr/eventsite/doctor", site, "doctor")
        bare = self.fresh_example("eventsite-no-adr")
        shutil.rmtree(bare / "doc")
        self.karni("adr/no-store/context", bare, "context")
        self.karni("adr/no-store/context-with-history", bare, "context", "--with-history", FILE)
        self.karni("adr/no-store/rules", bare, "rules")
        chron = self.work / "eventsite-chronicle"
        self.karni("adr/chronicle/context-with-history", chron, "context", "--with-history", FILE)

        for wheel in self.extra_wheels.values():
            self.pipx("inject", "--skip-maintenance", self.pip_args, "karni-cli", str(wheel))
        notes_store(site)
        self.karni("third-party/eventsite/context", site, "context")
        self.with_history("third-party/eventsite", site)
        self.karni("third-party/eventsite/rules", site, "rules")
        self.karni("third-party/eventsite/doctor", site, "doctor")

        for name in [*self.extra_wheels, "karni-history-adr"]:
            self.pipx("uninject", "karni-cli", name)
        self.plain_steps("after")
        return self.scenario


def normalize(text: str, work: Path, python_version: str, versions: dict[str, str]) -> str:
    """Replace what legitimately differs between runs, and nothing else.

    - the temporary folder → ``<tmp>``;
    - the interpreter's version (``Python 3.11.7``) → ``Python <python>``;
    - our own distributions' versions → ``<version>``, since a release runs this
      suite with bumped versions; after a replaced version, runs of spaces are
      collapsed to two, because the padding that follows depends on its length.
    """
    text = text.replace(str(work), "<tmp>")
    text = text.replace(f"Python {python_version}", "Python <python>")
    lines = []
    for line in text.split("\n"):
        replaced = line
        for name, version in versions.items():
            pattern = rf"(?<![\w.-])({re.escape(name)}:?\s+){re.escape(version)}(?![\w.])"
            replaced = re.sub(pattern, r"\g<1><version>", replaced)
        if replaced == f"karni {versions['karni-cli']}":
            replaced = "karni <version>"
        if replaced != line and "<version>" in replaced:
            start = replaced.index("<version>")
            replaced = replaced[:start] + re.sub(r" {2,}", "  ", replaced[start:])
        lines.append(replaced)
    return "\n".join(lines)
