"""A `.chronicle/` another user owns, in a shared parent folder, is never used by `karni`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from karni_provider_testkit import isolated_environment, make_karni_project

FOREIGN_UID = 4242
FILE = "src/session/store.ts"

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving a folder to another user takes root",
)


@pytest.fixture
def planted(fake_chronicle, tmp_path):
    """A store planted in a shared folder, with the user's project two folders below it."""
    shared = tmp_path / "shared"
    fake_chronicle.example_store(shared)
    project = make_karni_project(shared / "team" / "project")
    for folder in (shared, shared / ".chronicle"):
        os.chown(folder, FOREIGN_UID, FOREIGN_UID)
    return shared, project


def karni(project, home, *args):
    env = isolated_environment(home, {"KARNI_HISTORY_PROVIDERS": "gigai-chronicle"})
    return subprocess.run(
        [sys.executable, "-m", "karni.cli", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def test_context_ignores_it_and_chronicle_never_runs(planted, fake_chronicle, tmp_path):
    _, project = planted
    plain = karni(project, tmp_path / "home", "context")
    briefed = karni(project, tmp_path / "home", "context", "--with-history", FILE)
    assert (briefed.returncode, briefed.stderr) == (0, "")
    assert briefed.stdout == plain.stdout
    assert "HISTORY" not in briefed.stdout
    assert fake_chronicle.calls() == []


def test_doctor_says_which_store_it_ignored_and_why(planted, fake_chronicle, tmp_path):
    shared, project = planted
    doctor = karni(project, tmp_path / "home", "doctor", "--quiet")
    assert doctor.stdout.endswith(
        "stores ignored:\n"
        f"  {shared} is owned by another user (uid {FOREIGN_UID}); list {shared} under "
        f"safe_directories in your own Karni config.toml to use it\n"
    )
    assert "gigai-chronicle" in doctor.stdout and "no store" in doctor.stdout
    facts = json.loads(karni(project, tmp_path / "home", "doctor", "--json").stdout)
    assert facts["history"]["ignored_stores"] == [
        {
            "folder": str(shared),
            "marker": ".chronicle",
            "reason": f"{shared} is owned by another user (uid {FOREIGN_UID}); list {shared} "
            f"under safe_directories in your own Karni config.toml to use it",
        }
    ]
    assert fake_chronicle.calls() == []


def test_safe_directories_in_the_users_file_allow_it(planted, fake_chronicle, tmp_path):
    shared, project = planted
    config = tmp_path / "home" / "config" / "karni"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f"safe_directories = [{json.dumps(str(shared))}]\n")
    briefed = karni(project, tmp_path / "home", "context", "--with-history", FILE)
    assert briefed.returncode == 0
    [call] = fake_chronicle.calls()  # the store is used (it has nothing on this project's file)
    assert call.cwd == str(shared)
    assert "stores ignored" not in karni(project, tmp_path / "home", "doctor").stdout
