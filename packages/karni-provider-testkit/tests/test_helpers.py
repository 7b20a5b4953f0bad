"""The testkit's helpers, called directly."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from karni_provider_testkit import (
    CI_VARIABLES,
    ForbiddenCall,
    bounded_call,
    entry_point_value,
    find_karni_command,
    forbid_processes_and_sockets,
    isolated_environment,
    make_karni_project,
    unbounded_waits,
)
from karni_provider_testkit.install import _import_root


class ModuleLevelProvider:
    name = "module-level"


MODULE_LEVEL_INSTANCE = ModuleLevelProvider()


def test_isolated_environment_clears_ci_and_karni_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in CI_VARIABLES:
        monkeypatch.setenv(variable, "1")
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "x")
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "history")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    env = isolated_environment(tmp_path, {"KARNI_HISTORY_PROVIDERS": "adr", "PYTHONPATH": None})
    assert not set(CI_VARIABLES) & set(env)
    assert "KARNI_AGENT_CONDITIONS" not in env
    assert "PYTHONPATH" not in env
    assert env["KARNI_HISTORY_PROVIDERS"] == "adr"
    assert env["NO_COLOR"] == "1"
    assert env["XDG_CONFIG_HOME"] == str(tmp_path / "config")
    assert env["KARNI_CACHE_DIR"] == str(tmp_path / "cache" / "karni")


def test_find_karni_prefers_the_script_beside_the_interpreter() -> None:
    assert find_karni_command() == [str(Path(sys.executable).parent / "karni")]


def test_make_karni_project_writes_a_project(tmp_path: Path) -> None:
    root = make_karni_project(tmp_path / "p")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == [
        "apps/__init__.py",
        "apps/events/__init__.py",
        "apps/events/apps.py",
        "apps/events/models.py",
        "apps/events/viewsets.py",
        "config/__init__.py",
        "config/settings.py",
        "frontend/src/pages/EventList.tsx",
        "manage.py",
    ]


def test_entry_point_value_names_importable_objects() -> None:
    assert entry_point_value("pkg.mod:Thing") == "pkg.mod:Thing"
    assert entry_point_value(ModuleLevelProvider) == f"{__name__}:ModuleLevelProvider"
    assert entry_point_value(MODULE_LEVEL_INSTANCE) == f"{__name__}:MODULE_LEVEL_INSTANCE"


def test_entry_point_value_refuses_what_no_entry_point_can_name() -> None:
    class Local:
        name = "local"

    with pytest.raises(TypeError, match="define it at the top level of a module"):
        entry_point_value(Local)
    with pytest.raises(TypeError, match="not a module-level attribute"):
        entry_point_value(Local())
    with pytest.raises(TypeError, match="`module:attribute`"):
        entry_point_value("no_colon")


def test_import_root_is_the_folder_above_the_package() -> None:
    import karni_provider_testkit.install as module

    assert _import_root("karni_provider_testkit.install:x") == Path(module.__file__).parents[1]


def test_forbid_processes_and_sockets_records_and_restores() -> None:
    original_popen, original_socket = subprocess.Popen, socket.socket
    with forbid_processes_and_sockets() as attempts:
        with pytest.raises(ForbiddenCall):
            subprocess.run(["true"], timeout=5)
        with pytest.raises(ForbiddenCall):
            socket.socket()
    assert [attempt.split("(")[0] for attempt in attempts] == ["subprocess.Popen", "socket.socket"]
    assert subprocess.Popen is original_popen and socket.socket is original_socket


def test_unbounded_waits_flags_only_waits_without_a_deadline() -> None:
    quick = [sys.executable, "-S", "-c", "pass"]
    slow = [sys.executable, "-S", "-c", "import time; time.sleep(5)"]
    with unbounded_waits() as found:
        subprocess.run(quick, capture_output=True, timeout=30)
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run(slow, capture_output=True, timeout=0.2)
        subprocess.check_output(quick, timeout=30)
    assert found == []
    with unbounded_waits() as found:
        subprocess.run(quick, capture_output=True)
        subprocess.call(quick)
    assert len(found) == 2
    assert found[0].startswith("Popen.communicate without a timeout")
    assert found[1].startswith("Popen.wait without a timeout")


def test_unbounded_waits_flags_sockets_without_timeouts() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    address = server.getsockname()
    try:
        with unbounded_waits() as found:
            socket.create_connection(address, timeout=5).close()
            client = socket.socket()
            client.connect(address)
            client.close()
        assert found == [f"socket.connect({address!r}) without a timeout"]
    finally:
        server.close()


def test_bounded_call_reraises_and_times_out() -> None:
    assert bounded_call(lambda x: x + 1, 1) == 2
    with pytest.raises(ZeroDivisionError):
        bounded_call(lambda: 1 / 0)
    import threading

    never = threading.Event()
    with pytest.raises(TimeoutError):
        bounded_call(never.wait, seconds=0.05)
    never.set()
