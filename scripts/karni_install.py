"""``scripts/install``: the ``karni`` command and the providers you pick, from this repository.

    scripts/install [--uv] [--python PYTHON] [PROVIDER ...]

1. Builds every wheel of the workspace (``uv build --all-packages --wheel
   --no-sources``) into the wheel folder (``$KARNI_WHEELS``, by default
   ``$XDG_DATA_HOME/karni/wheels``, i.e. ``~/.local/share/karni/wheels``),
   replacing what an earlier run left there.
2. Writes ``constraints.txt`` beside them, pinning each of this repository's
   distributions to its wheel by a direct reference
   (``karni-core @ file:///…/karni_core-0.1.0-py3-none-any.whl``). Every
   install below passes it (``-c``), so pip and uv never look for one of our
   names on a package index: the index has another project's ``karni-cli``.
   Third-party dependencies (``tomlkit``, a model SDK) come from the index
   as usual.
3. With pipx (the default): ``pipx install karni-cli`` when it is not
   installed yet, else ``pipx reinstall karni-cli`` (the fresh wheels for it
   and for every provider added before); then ``pipx inject
   --include-apps`` for each PROVIDER not added yet. With ``--uv``: ``uv
   tool install karni-cli --with PROVIDER …`` with every provider added
   before and the new ones, their commands exposed
   (``--with-executables-from``).

A PROVIDER is one of this repository's (``karni-history-adr``,
``karni-historian``, optionally with extras: ``karni-historian[anthropic]``).
The built-in Chronicle provider comes with ``karni-cli``. Someone else's
provider goes in with ``pipx inject karni-cli NAME`` (see docs/quickstart.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BUILT_IN = "karni-history-chronicle"
"""The provider ``karni-cli`` depends on: never picked, always there."""


def _providers() -> tuple[str, ...]:
    """The workspace's distributions that register a history provider, but the built-in one."""
    found = []
    for pyproject in sorted((REPO / "packages").glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if "karni.history_providers" in project.get("entry-points", {}):
            found.append(project["name"])
    return tuple(name for name in found if name != BUILT_IN)


PROVIDERS = _providers()
"""This repository's providers a user can pick (``karni-history-adr``, ``karni-historian``)."""

CLI = "karni-cli"

CONSTRAINTS = "constraints.txt"


class InstallError(Exception):
    """One line for the user: what went wrong and what to do."""


def wheel_folder() -> Path:
    """Where the wheels live between runs: pipx and uv read them again on a reinstall."""
    given = os.environ.get("KARNI_WHEELS")
    if given:
        return Path(given).expanduser().absolute()
    data = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data) if os.path.isabs(data) else Path.home() / ".local" / "share"
    return base / "karni" / "wheels"


def distribution_of(wheel: Path) -> str:
    """``karni_history_adr-0.1.0-py3-none-any.whl`` → ``karni-history-adr``."""
    return wheel.name.split("-", 1)[0].replace("_", "-")


def _build_into(uv: str, fresh: Path) -> None:
    command = [uv, "build", "--all-packages", "--wheel", "--no-sources", "-q", "-o", str(fresh)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        raise InstallError(f"`uv build` failed (exit {result.returncode}); its message is above")


def _copy_into(source: Path, fresh: Path) -> None:
    """Our wheels from ``source`` (``KARNI_INSTALL_FROM``: a release's or CI's built wheels)."""
    found = [wheel for wheel in source.glob("karni_*.whl") if wheel.is_file()]
    if not found:
        raise InstallError(f"KARNI_INSTALL_FROM={source} holds no karni_*.whl; build them first")
    for wheel in found:
        shutil.copy2(wheel, fresh / wheel.name)


def build(uv: str, folder: Path) -> dict[str, Path]:
    """Build every wheel into ``folder`` (replacing it); return distribution → wheel.

    With ``KARNI_INSTALL_FROM=DIR`` the wheels already built in DIR are
    taken instead (the integration tests install what a release would upload).
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=".wheels-", dir=folder.parent))
    source = os.environ.get("KARNI_INSTALL_FROM")
    print(f"install: {'copying' if source else 'building'} the wheels into {folder}", flush=True)
    try:
        if source:
            _copy_into(Path(source), fresh)
        else:
            _build_into(uv, fresh)
    except InstallError:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    wheels = {distribution_of(wheel): wheel.name for wheel in fresh.glob("*.whl")}
    if CLI not in wheels:
        shutil.rmtree(fresh, ignore_errors=True)
        raise InstallError(f"`uv build` made no {CLI} wheel in {fresh}; is {REPO} a checkout?")
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    fresh.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return {name: folder / wheel for name, wheel in wheels.items()}


def write_constraints(folder: Path, wheels: dict[str, Path]) -> Path:
    """``constraints.txt``: each of our distributions pinned to its wheel."""
    lines = [f"{name} @ {wheel.as_uri()}" for name, wheel in sorted(wheels.items())]
    path = folder / CONSTRAINTS
    path.write_text(
        "# Written by scripts/install: every distribution of the Karni agent-history\n"
        "# repository comes from these wheels, never from a package index.\n"
        + "\n".join(lines)
        + "\n",
        encoding="utf-8",
    )
    return path


def requested(values: list[str]) -> list[str]:
    """The providers asked for, validated: our names, with optional extras."""
    chosen = []
    for value in values:
        name = value.split("[", 1)[0].strip().lower().replace("_", "-")
        if name == BUILT_IN:
            raise InstallError(
                f"{BUILT_IN} is built in: karni-cli brings it; name only {' or '.join(PROVIDERS)}"
            )
        if name not in PROVIDERS:
            raise InstallError(
                f"`{value}` is not one of this repository's providers ({', '.join(PROVIDERS)}); "
                f"add someone else's with `pipx inject karni-cli NAME`"
            )
        if value not in chosen:
            chosen.append(value)
    return chosen


def run(command: list[str], what: str) -> subprocess.CompletedProcess[str]:
    """Run an installer with its output shown; a failure becomes one line."""
    print(f"install: {shlex.join(command)}", flush=True)
    result = subprocess.run(command, check=False, text=True)
    if result.returncode != 0:
        raise InstallError(f"{what} failed (exit {result.returncode}); its message is above")
    return result


def output(command: list[str]) -> str:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        raise InstallError(f"`{shlex.join(command)}` failed (exit {result.returncode})")
    return result.stdout


def python_version(python: str) -> tuple[int, int] | None:
    """The ``(major, minor)`` of the interpreter ``python`` (a path, a command or ``3.12``)."""
    parts = python.split(".")
    if len(parts) == 2 and all(part.isdigit() for part in parts):
        return int(parts[0]), int(parts[1])
    found = shutil.which(python)
    if found is None:
        return None
    probe = subprocess.run(
        [found, "-c", "import sys; print(*sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=False,
    )
    numbers = probe.stdout.split()
    return (int(numbers[0]), int(numbers[1])) if probe.returncode == 0 and numbers else None


def check_python(python: str, how: str) -> None:
    version = python_version(python)
    if version is not None and version < (3, 11):
        raise InstallError(
            f"{how} Python {version[0]}.{version[1]} ({python}); karni needs 3.11 or newer: "
            f"pass --python with one, e.g. `scripts/install --python python3.12`"
        )


def pipx_command() -> list[str]:
    found = shutil.which("pipx")
    if found is None:
        raise InstallError(
            "pipx is not installed; install it (`python3 -m pip install --user pipx`, or "
            "your system's pipx package), or install with uv: `scripts/install --uv`"
        )
    return [found]


def pipx_install(pipx: list[str], constraints: Path, providers: list[str], python: str | None):
    """Install or refresh ``karni-cli`` with pipx, then inject the providers not there yet."""
    venvs = json.loads(output([*pipx, "list", "--json"])).get("venvs", {})
    metadata = venvs.get(CLI, {}).get("metadata")
    pip_args = "--pip-args=" + shlex.join(["-c", str(constraints)])
    chosen = ["--python", python] if python else []
    if metadata is None:
        if not python:
            default = output([*pipx, "environment", "--value", "PIPX_DEFAULT_PYTHON"]).strip()
            check_python(default, "pipx would make karni's environment with")
        run([*pipx, "install", *chosen, pip_args, CLI], "pipx install")
        injected: dict[str, dict] = {}
    else:
        main = metadata.get("main_package", {})
        if str(constraints) not in main.get("pip_args", []):
            version = main.get("package_version", "?")
            raise InstallError(
                f"pipx's {CLI} {version} was not installed from this repository (another "
                f"project's {CLI} is on the package index); remove it with `pipx uninstall "
                f"{CLI}` and run scripts/install again"
            )
        run([*pipx, "reinstall", *chosen, CLI], "pipx reinstall")
        injected = metadata.get("injected_packages", {})
    for provider in providers:
        name = provider.split("[", 1)[0]
        before = injected.get(name)
        has_command = name in _with_commands()
        same = before is not None and before.get("package_or_url") == provider
        if same and (before.get("include_apps") or not has_command):
            continue  # added before, as asked now: the reinstall refreshed it
        force = ["--force"] if before is not None else []
        apps = ["--include-apps"] if has_command else []
        run([*pipx, "inject", *apps, *force, pip_args, CLI, provider], "pipx inject")


def _receipt(uv: str) -> dict | None:
    folder = Path(output([uv, "tool", "dir"]).strip())
    path = folder / CLI / "uv-receipt.toml"
    if not path.is_file():
        return None
    return tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})


def _spec(requirement: dict) -> str:
    """A requirement of a uv receipt as a requirement string."""
    name = requirement["name"]
    extras = requirement.get("extras") or []
    text = f"{name}[{','.join(extras)}]" if extras else name
    if "path" in requirement:
        return f"{text} @ {Path(requirement['path']).absolute().as_uri()}"
    if "url" in requirement:
        return f"{text} @ {requirement['url']}"
    return text + requirement.get("specifier", "")


def uv_install(
    uv: str, constraints: Path, wheels: dict[str, Path], providers: list[str], python: str | None
) -> list[str]:
    """``uv tool install karni-cli`` with the providers added before and ``providers``."""
    receipt = _receipt(uv)
    withs: list[str] = []
    if receipt is not None:
        pinned = {entry.get("name"): entry.get("path") for entry in receipt.get("constraints", [])}
        if pinned.get(CLI) is None or Path(pinned[CLI]).parent != constraints.parent:
            raise InstallError(
                f"uv's {CLI} tool was not installed from this repository (another project's "
                f"{CLI} is on the package index); remove it with `uv tool uninstall {CLI}` and "
                f"run scripts/install --uv again"
            )
        for entry in receipt.get("requirements", []):  # uv lists a --with-executables-from twice
            spec = _spec(entry)
            if entry["name"] != CLI and spec not in withs:
                withs.append(spec)
    for provider in providers:
        withs = [spec for spec in withs if _name(spec) != _name(provider)] + [provider]
    executables = sorted({_name(spec) for spec in withs if _name(spec) in _with_commands()})
    command = [uv, "tool", "install", "--constraints", str(constraints)]
    for name in sorted(wheels):
        command += ["--reinstall-package", name]
    for spec in withs:
        command += ["--with", spec]
    if executables:
        command += ["--with-executables-from", ",".join(executables)]
    command += ["--python", python] if python else []
    run([*command, CLI], "uv tool install")
    return list(dict.fromkeys(_name(spec) for spec in withs))


def _name(spec: str) -> str:
    """The distribution a requirement string names: ``karni-historian[openai]`` → its name."""
    for separator in ("[", " ", "@", "<", ">", "=", "!", "~", ";"):
        spec = spec.split(separator, 1)[0]
    return spec.strip().lower()


def _with_commands() -> set[str]:
    """The providers with a command of their own (``project.scripts``)."""
    found = set()
    for pyproject in (REPO / "packages").glob("*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") in PROVIDERS and project.get("scripts"):
            found.add(project["name"])
    return found


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/install",
        description="Build this repository's wheels and install `karni` with the providers "
        "you name (pipx by default); run it again to add a provider.",
    )
    parser.add_argument("providers", nargs="*", metavar="PROVIDER", help=", ".join(PROVIDERS))
    parser.add_argument("--uv", action="store_true", help="install with `uv tool install`")
    parser.add_argument("--python", help="the Python for karni's environment (3.11 or newer)")
    parser.add_argument("--uv-command", default="uv", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        providers = requested(args.providers)
        if args.python:
            check_python(args.python, "--python names")
        pipx = None if args.uv else pipx_command()
        folder = wheel_folder()
        wheels = build(args.uv_command, folder)
        constraints = write_constraints(folder, wheels)
        if pipx is None:
            added = uv_install(args.uv_command, constraints, wheels, providers, args.python)
            how = "uv tool"
        else:
            pipx_install(pipx, constraints, providers, args.python)
            added, how = providers, "pipx"
    except InstallError as error:
        print(f"install: {error}", file=sys.stderr)
        return 1
    version = wheels[CLI].name.split("-")[1]
    extra = f", with {', '.join(added)}" if added else ""
    print(f"install: karni {version} is installed ({how}){extra}; run `karni doctor`")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
