"""A cloned repository's code never runs unless the user trusts the project (`karni trust`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from karni.cli.main import main

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the planted programs are shell scripts")

FOREIGN_UID = 4242
"""A user id that is not the one running the tests."""

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving a folder to another user takes root",
)


def plant_interpreter(root: Path, proof: Path) -> None:
    """A repository's `.venv/bin/python` that is a shell script leaving ``proof`` behind."""
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho ran >> "{proof}"\n', encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def cloned(eventsite: Path, tmp_path: Path, run_cli) -> Path:
    """The example project as just cloned, with adapters fresh and a planted interpreter."""
    assert run_cli("rules", "sync", cwd=eventsite).returncode == 0
    plant_interpreter(eventsite, tmp_path / "proof")
    return eventsite


def test_check_does_not_run_an_untrusted_interpreter(cloned: Path, tmp_path: Path, run_cli):
    result = run_cli("check", "--quiet", cwd=cloned)
    assert not (tmp_path / "proof").exists()
    assert result.returncode == 0
    assert result.stdout == "karni check: ok\n"
    assert result.stderr == (
        f"karni check: skipped Django's system checks: {cloned} is not trusted to run its own "
        f".venv interpreter; run `karni trust` (in CI: KARNI_TRUST_PROJECT=1) to run them\n"
    )


def test_the_other_checks_still_decide_the_exit_status(cloned: Path, tmp_path: Path, run_cli):
    (cloned / "AGENTS.md").write_text("hand-written\n", encoding="utf-8")
    result = run_cli("check", cwd=cloned)
    assert not (tmp_path / "proof").exists()
    assert result.returncode == 1
    assert "skipped  django system checks: not run: the project is not trusted" in result.stdout
    assert result.stdout.endswith("karni check: 1 failed (agent adapters)\n")


def test_trust_list_and_revoke(cloned: Path, tmp_path: Path, run_cli, isolated_env: Path):
    trusted = run_cli("trust", cwd=cloned)
    assert (trusted.returncode, trusted.stdout) == (0, f"trusted: {cloned.resolve()}\n")
    record = json.loads((isolated_env / "config" / "karni" / "trusted-projects.json").read_text())
    assert record == {"projects": [{"path": str(cloned.resolve()), "owner": os.getuid()}]}
    assert (
        stat.S_IMODE(os.stat(isolated_env / "config" / "karni" / "trusted-projects.json").st_mode)
        == 0o600
    )
    listed = run_cli("trust", "--list", cwd=tmp_path)
    assert listed.stdout == f"{cloned.resolve()} (uid {os.getuid()})\n"

    run_cli("check", cwd=cloned)
    assert (tmp_path / "proof").read_text() == "ran\nran\n"  # the Django probe, then the checks

    revoked = run_cli("trust", "--revoke", str(cloned), cwd=tmp_path)
    assert revoked.stdout == f"no longer trusted: {cloned.resolve()}\n"
    assert run_cli("trust", "--list", cwd=tmp_path).stdout == ""
    result = run_cli("check", cwd=cloned)
    assert (tmp_path / "proof").read_text() == "ran\nran\n"  # not run again
    assert "is not trusted" in result.stderr


def test_trust_is_keyed_by_the_resolved_path(cloned: Path, tmp_path: Path, run_cli):
    link = tmp_path / "link"
    link.symlink_to(cloned)
    assert run_cli("trust", str(link), cwd=tmp_path).stdout == f"trusted: {cloned.resolve()}\n"
    run_cli("check", cwd=cloned)
    assert (tmp_path / "proof").exists()


def test_a_project_moved_into_place_is_not_trusted(cloned: Path, tmp_path: Path, run_cli):
    assert run_cli("trust", cwd=cloned).returncode == 0
    cloned.rename(tmp_path / "elsewhere")
    other = tmp_path / "elsewhere"
    assert "is not trusted" in run_cli("check", cwd=other).stderr
    assert not (tmp_path / "proof").exists()


def test_the_ci_variable_trusts_the_working_project(cloned: Path, tmp_path: Path, run_cli):
    result = run_cli("check", cwd=cloned, env={"KARNI_TRUST_PROJECT": "1"})
    assert (tmp_path / "proof").exists()
    assert "not trusted" not in result.stderr + result.stdout
    assert "KARNI_TRUST_PROJECT" in (Path(__file__).parents[3] / "docs" / "security.md").read_text()


def test_false_values_of_the_ci_variable_trust_nothing(cloned: Path, tmp_path: Path, run_cli):
    for value in ("0", "false", "no", "off", ""):
        run_cli("check", cwd=cloned, env={"KARNI_TRUST_PROJECT": value})
    assert not (tmp_path / "proof").exists()


def test_a_broken_trust_record_trusts_nothing(cloned: Path, tmp_path: Path, run_cli, isolated_env):
    folder = isolated_env / "config" / "karni"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "trusted-projects.json")
    result = run_cli("check", cwd=cloned, timeout=30)
    assert not (tmp_path / "proof").exists()
    assert result.returncode == 0
    listed = run_cli("trust", "--list", cwd=cloned, timeout=30)
    assert listed.returncode == 1
    assert listed.stderr.count("\n") == 1
    assert "trusted-projects.json is not a regular file" in listed.stderr


@needs_root
def test_a_project_owned_by_another_user_needs_force(cloned: Path, tmp_path: Path, run_cli):
    os.chown(cloned, FOREIGN_UID, FOREIGN_UID)
    refused = run_cli("trust", str(cloned), cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"karni: {cloned.resolve()} is owned by another user (uid {FOREIGN_UID}); its code "
        f"would run as you: pass --force only if you are sure\n"
    )
    assert run_cli("trust", "--list", cwd=tmp_path).stdout == ""
    forced = run_cli("trust", "--force", str(cloned), cwd=tmp_path)
    assert forced.stdout == f"trusted: {cloned.resolve()}\n"
    assert run_cli("trust", "--list", cwd=tmp_path).stdout == (
        f"{cloned.resolve()} (uid {FOREIGN_UID})\n"
    )


@needs_root
def test_a_project_in_a_parent_folder_of_another_user_is_not_taken(tmp_path: Path, run_cli):
    shared = tmp_path / "shared"
    mine = shared / "mine" / "work"
    mine.mkdir(parents=True)
    (shared / "manage.py").write_text("", encoding="utf-8")
    plant_interpreter(shared, tmp_path / "proof")
    os.chown(shared / "manage.py", FOREIGN_UID, FOREIGN_UID)
    os.chown(shared, FOREIGN_UID, FOREIGN_UID)
    result = run_cli("check", cwd=mine, env={"KARNI_TRUST_PROJECT": "1"})
    assert not (tmp_path / "proof").exists()
    assert result.returncode == 1
    assert result.stderr == (
        f"karni: no Karni project at or above {mine} that you own: {shared} is owned by "
        f"another user (uid {FOREIGN_UID}); list {shared} under safe_directories in your own "
        f"Karni config.toml to use it\n"
    )


@needs_root
def test_safe_directories_count_only_in_the_users_own_file(
    tmp_path: Path, run_cli, isolated_env: Path
):
    shared = tmp_path / "shared"
    (shared / "sub").mkdir(parents=True)
    (shared / "manage.py").write_text("", encoding="utf-8")
    os.chown(shared, FOREIGN_UID, FOREIGN_UID)
    entry = f"safe_directories = [{json.dumps(str(shared))}]\n"
    (shared / ".karni").mkdir()
    (shared / ".karni" / "config.toml").write_text(entry, encoding="utf-8")
    assert run_cli("doctor", "--json", cwd=shared / "sub").stdout.count('"project": null') == 1
    (isolated_env / "config" / "karni").mkdir(parents=True)
    (isolated_env / "config" / "karni" / "config.toml").write_text(entry, encoding="utf-8")
    facts = json.loads(run_cli("doctor", "--json", cwd=shared / "sub").stdout)
    assert facts["project"] == str(shared)


def test_main_lists_the_trust_command(capsys) -> None:
    assert main(["--help"]) == 0
    assert "  trust       let `karni check` run a project's own code" in capsys.readouterr().out


def test_python_m_does_not_take_providers_from_the_working_folder(
    eventsite: Path, tmp_path: Path, run_cli
) -> None:
    info = eventsite / "evil-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[karni.history_providers]\nevil = evil_provider:P\n")
    (eventsite / "evil_provider.py").write_text(
        f"open({str(tmp_path / 'proof')!r}, 'w').close()\n"
        "class P:\n    name = 'evil'\n    def detect(self, root):\n        return True\n"
        "    def context(self, root, path):\n        return 'HISTORY: planted'\n",
        encoding="utf-8",
    )
    env = {"KARNI_HISTORY_PROVIDERS": "evil"}
    result = run_cli("context", "--with-history", "manage.py", cwd=eventsite, env=env)
    assert result.returncode == 0
    assert not (tmp_path / "proof").exists()
    doctor = run_cli("doctor", cwd=eventsite)
    assert "evil" not in doctor.stdout
    assert not (tmp_path / "proof").exists()
