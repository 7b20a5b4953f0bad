"""A repository's links, FIFOs and huge files: no write through a link, no hanging read.

Each attack runs the real command in a process whose HOME is a temporary
folder holding the "secrets" a link points at.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name == "nt", reason="symlinks and FIFOs")

TOKEN = 'token = "cio-SECRET"\n'


@pytest.fixture
def secrets(isolated_env: Path) -> Path:
    """A HOME with ~/.cargo/credentials.toml, ~/.cargo/config.toml and ~/.ssh/id_rsa."""
    cargo = isolated_env / ".cargo"
    cargo.mkdir()
    (cargo / "credentials.toml").write_text(TOKEN, encoding="utf-8")
    (cargo / "config.toml").write_text("[build]\njobs = 2\n", encoding="utf-8")
    ssh = isolated_env / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("PRIVATE KEY\n", encoding="utf-8")
    return isolated_env


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def secret_files(home: Path) -> dict[str, bytes]:
    return {**snapshot(home / ".cargo"), **snapshot(home / ".ssh")}


def tree(folder: Path) -> dict[str, str]:
    """Every path under ``folder``: a link's target, a folder, or a file's bytes."""
    found = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = f"link to {os.readlink(path)}"
        elif path.is_dir():
            found[name] = "folder"
        else:
            found[name] = path.read_bytes().decode("utf-8", "replace")
    return found


def test_config_set_through_a_linked_config_file(eventsite: Path, secrets: Path, run_cli):
    (eventsite / ".karni").mkdir()
    link = eventsite / ".karni" / "config.toml"
    link.symlink_to(secrets / ".cargo" / "credentials.toml")
    before = secret_files(secrets)
    project = tree(eventsite)
    result = run_cli("config", "set", "suggest_tools", "false", cwd=eventsite)
    assert tree(eventsite) == project  # a refusal writes nothing, not even .karni/.gitignore
    assert result.returncode == 1
    assert result.stderr == (
        f"karni: cannot write {link}: {link} is a symlink; Karni does not write through "
        f"symlinks; replace the link with a real file or folder\n"
    )
    assert result.stdout == ""
    assert secret_files(secrets) == before
    assert link.is_symlink()
    copies = [p for p in eventsite.rglob("*") if p.is_file() and b"cio-SECRET" in p.read_bytes()]
    assert not [p for p in copies if not p.is_symlink()]


def test_config_set_through_a_linked_karni_folder(eventsite: Path, secrets: Path, run_cli):
    (eventsite / ".karni").symlink_to(secrets / ".cargo")
    before = secret_files(secrets)
    result = run_cli("config", "set", "suggest_tools", "false", cwd=eventsite)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert f"{eventsite / '.karni'} is a symlink" in result.stderr
    assert secret_files(secrets) == before


REFUSALS = {
    "config set, a linked config file": (
        "mkdir .karni && ln -s $SECRETS/.cargo/credentials.toml .karni/config.toml",
        ["config", "set", "suggest_tools", "false"],
    ),
    "config set, a linked .karni folder": (
        "ln -s $SECRETS/.cargo .karni",
        ["config", "set", "suggest_tools", "false"],
    ),
    "config set, a value it does not take": ("true", ["config", "set", "suggest_tools", "maybe"]),
    "config set, a settings file that is not TOML": (
        "mkdir .karni && printf 'x = [' > .karni/config.toml",
        ["config", "set", "suggest_tools", "false"],
    ),
    "hooks install, a linked settings file": (
        "mkdir .claude && ln -s $SECRETS/.ssh/id_rsa .claude/settings.local.json",
        ["hooks", "install", "--agent", "claude-code"],
    ),
    "hooks install, a linked .claude folder": (
        "ln -s $SECRETS/.ssh .claude",
        ["hooks", "install", "--agent", "claude-code"],
    ),
    "hooks install, a settings file that is not JSON": (
        "mkdir .claude && echo '{bad' > .claude/settings.local.json",
        ["hooks", "install", "--agent", "claude-code"],
    ),
    "new, a linked folder": ("ln -s $SECRETS/.ssh newsite", ["new", "newsite"]),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refused_command_writes_nothing(eventsite: Path, secrets: Path, run_cli, case: str):
    """One line on stderr, a non-zero status, and the project and the linked files unchanged."""
    setup, argv = REFUSALS[case]
    subprocess.run(
        ["sh", "-c", setup], cwd=eventsite, env={**os.environ, "SECRETS": str(secrets)}, check=True
    )
    project, linked = tree(eventsite), secret_files(secrets)
    result = run_cli(*argv, cwd=eventsite)
    assert result.returncode != 0
    assert result.stderr.startswith("karni: ") and result.stderr.count("\n") == 1
    assert tree(eventsite) == project
    assert secret_files(secrets) == linked


def test_a_decision_record_linked_out_of_the_project_is_never_shown(
    eventsite: Path, secrets: Path, run_cli
):
    """`docs/adr/0004-x.md` → a private note: `karni context --with-history` never reads it."""
    private = secrets / ".ssh" / "notes.md"
    private.write_text(
        "# 4. PRIVATE-NOTE-TITLE\n\n## Status\n\nAccepted\n\napps/events/models.py\n",
        encoding="utf-8",
    )
    records = eventsite / "doc" / "adr"
    (records / "0099-linked.md").symlink_to(private)
    env = {"KARNI_HISTORY_PROVIDERS": "adr"}
    for argv in (["apps/events/models.py"], []):
        result = run_cli("context", "--with-history", *argv, cwd=eventsite, env=env)
        assert result.returncode == 0 and result.stderr == ""
        assert "HISTORY:" in result.stdout  # the project's own records are shown
        assert "PRIVATE-NOTE-TITLE" not in result.stdout


def test_rules_sync_never_writes_through_a_linked_folder(eventsite: Path, secrets: Path, run_cli):
    (eventsite / "lnk").symlink_to(secrets / ".ssh")
    rules = eventsite / "karni.rules.py"
    rules.write_text('ADAPTERS = {"claude": "lnk/authorized_keys"}\n', encoding="utf-8")
    before = secret_files(secrets)
    created = run_cli("rules", "sync", cwd=eventsite)
    assert not (secrets / ".ssh" / "authorized_keys").exists()
    assert "lnk/authorized_keys is reached through a symlink" in created.stderr + created.stdout

    rules.write_text('ADAPTERS = {"claude": "lnk/id_rsa"}\n', encoding="utf-8")
    forced = run_cli("rules", "sync", "--force", cwd=eventsite)
    assert forced.returncode != 0
    assert secret_files(secrets) == before
    backups = eventsite / ".karni" / "backup"
    assert not backups.exists() or b"PRIVATE KEY" not in b"".join(snapshot(backups).values())


def test_tip_state_never_lands_through_a_linked_local_folder(
    eventsite: Path, secrets: Path, run_cli
):
    (eventsite / ".karni").mkdir()
    (eventsite / ".karni" / "local").symlink_to(secrets / ".ssh")
    before = secret_files(secrets)
    result = run_cli("doctor", cwd=eventsite)
    assert result.returncode == 0
    assert secret_files(secrets) == before
    assert sorted(os.listdir(secrets / ".ssh")) == ["id_rsa"]


def test_caches_are_owner_only(eventsite: Path, run_cli, isolated_env: Path):
    assert run_cli("context", cwd=eventsite).returncode == 0
    cache = isolated_env / "cache"
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files
    for path in [cache, *cache.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_hostile_config_file_is_refused_in_one_line(eventsite: Path, run_cli, kind: str):
    (eventsite / ".karni").mkdir()
    config = eventsite / ".karni" / "config.toml"
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "dev-zero":
        config.symlink_to("/dev/zero")
    else:
        with open(config, "wb") as handle:
            handle.truncate(1 << 30)  # sparse: 1 GB that takes no disk
    for args in (["config", "list"], ["check"]):
        result = run_cli(*args, cwd=eventsite, timeout=30)
        assert result.returncode == 1, args
        message = result.stderr if args[0] == "config" else result.stdout
        assert str(config) in message
        if args[0] == "config":
            assert message.count("\n") == 1


@pytest.mark.parametrize("planted", ["karni.rules.py", "apps/events/models.py"])
def test_a_fifo_in_the_repository_does_not_hang_a_command(eventsite: Path, run_cli, planted):
    target = eventsite / planted
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    for args in (["context"], ["rules"]):
        result = run_cli(*args, cwd=eventsite, timeout=30)
        if planted == "karni.rules.py" and args == ["rules"]:
            assert result.returncode == 1
            assert result.stderr == (
                "karni: karni.rules.py:1: is not a regular file (a folder, a FIFO or a device); "
                "make it a plain file\n"
            )
        else:
            assert result.returncode == 0, result.stderr
