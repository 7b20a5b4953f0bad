"""detect: the nearest `.chronicle/` at or above the project root, no process, cheap import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from karni.agent.history_chronicle import ChronicleProvider
from karni.agent.history_chronicle.store import find_store_root


def test_no_store(tmp_path):
    assert ChronicleProvider().detect(tmp_path) is False


def test_store_at_the_project_root(tmp_path):
    (tmp_path / ".chronicle").mkdir()
    assert ChronicleProvider().detect(tmp_path) is True


def test_store_above_the_project_root(tmp_path):
    (tmp_path / ".chronicle").mkdir()
    project = tmp_path / "services" / "api"
    project.mkdir(parents=True)
    assert ChronicleProvider().detect(project) is True
    assert ChronicleProvider().detect(str(project)) is True


def test_a_plain_file_is_not_a_store(tmp_path):
    (tmp_path / ".chronicle").write_text("not a store\n")
    assert ChronicleProvider().detect(tmp_path) is False


def test_a_plain_file_stops_the_walk_like_chronicle(tmp_path):
    # Chronicle stops at the first entry named .chronicle and then fails (exit 1), so a
    # real store further up would never be used: the provider must not detect it either.
    (tmp_path / ".chronicle").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / ".chronicle").write_text("")
    assert ChronicleProvider().detect(project) is False


@pytest.mark.parametrize(
    ("target", "store_at"),
    [("missing", "above"), ("real-store", "project")],
    ids=["dangling: skipped, the walk goes on", "to a directory: a store"],
)
def test_a_symlinked_chronicle(tmp_path, target, store_at):
    (tmp_path / ".chronicle").mkdir()
    (tmp_path / "real-store").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / ".chronicle").symlink_to(tmp_path / target)
    assert ChronicleProvider().detect(project) is True
    expected = project if store_at == "project" else tmp_path
    assert find_store_root(project) == str(expected)


def test_the_walk_starts_from_the_physical_path(tmp_path):
    (tmp_path / "real" / ".chronicle").mkdir(parents=True)
    (tmp_path / "real" / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link").symlink_to(tmp_path / "real" / "project")
    assert ChronicleProvider().detect(tmp_path / "elsewhere" / "link") is True


def test_detect_starts_no_process(tmp_path, monkeypatch):
    (tmp_path / ".chronicle").mkdir()

    def refuse(*args, **kwargs):
        raise AssertionError("detect started a process")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse, raising=False)
    assert ChronicleProvider().detect(tmp_path) is True
    assert ChronicleProvider().detect(tmp_path / "nowhere") is True


def test_import_and_detect_are_cheap(tmp_path):
    (tmp_path / ".chronicle").mkdir()
    code = (
        "import sys\n"
        "from karni.agent.history_chronicle import ChronicleProvider\n"
        f"assert ChronicleProvider().detect({str(tmp_path)!r})\n"
        "heavy = {'subprocess', 'json', 'shlex', 'shutil', 'typing', 'karni.agent.history'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"timeout": 0}, "`timeout` must be a positive number of seconds, got 0"),
        ({"timeout": -1.0}, "`timeout` must be a positive number of seconds, got -1.0"),
        ({"timeout": float("inf")}, "`timeout` must be a positive number of seconds, got inf"),
        ({"timeout": True}, "`timeout` must be a positive number of seconds, got True"),
        ({"timeout": "5"}, "`timeout` must be a positive number of seconds, got '5'"),
        ({"limit": 0}, "`limit` must be a whole number >= 1, got 0"),
        ({"limit": 2.5}, "`limit` must be a whole number >= 1, got 2.5"),
        ({"executable": ""}, "`executable` must name the chronicle command, got ''"),
    ],
)
def test_bad_configuration_is_a_clear_error(arguments, message):
    with pytest.raises(ValueError) as raised:
        ChronicleProvider(**arguments)
    assert str(raised.value) == f"ChronicleProvider: {message}"


def test_the_documented_replacement_example_works():
    provider = ChronicleProvider(timeout=15.0)
    assert provider.timeout == 15.0
    assert provider.limit == 5
    assert provider.executable == "chronicle"
    assert provider.name == "gigai-chronicle"
    assert repr(provider) == ("ChronicleProvider(executable='chronicle', timeout=15.0, limit=5)")
