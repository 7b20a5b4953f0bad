"""FakeChronicle and FakeStore: configuration, the call log, the script and the fixture."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from karni_provider_testkit.fake_chronicle import (
    ChronicleCall,
    FakeChronicle,
    FakeStore,
    pid_alive,
)

ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def test_the_fixture_puts_chronicle_first_on_path(fake_chronicle):
    assert isinstance(fake_chronicle, FakeChronicle)
    assert shutil.which("chronicle") == str(fake_chronicle.bin_dir / "chronicle")
    assert os.environ["PATH"].split(os.pathsep)[0] == str(fake_chronicle.bin_dir)
    assert fake_chronicle.calls() == []


def test_every_call_is_recorded(fake_chronicle, tmp_path):
    fake_chronicle.create_store(tmp_path)
    subprocess.run(
        ["chronicle", "knowledge", "--json"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
    )
    process = subprocess.Popen(
        ["chronicle", "--version"], cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    process.communicate(b"typed input")
    (first, second) = fake_chronicle.calls()
    assert first == ChronicleCall(["knowledge", "--json"], str(tmp_path), first.pid, "eof")
    assert second.argv == ["--version"]
    assert second.pid == process.pid  # the script execs: the pid a caller sees is the double's
    assert second.stdin in ("data", "open")  # an open pipe: written to, or not yet
    fake_chronicle.reset()
    assert fake_chronicle.calls() == []


def test_stdin_closed_outright_is_recorded(fake_chronicle, tmp_path):
    subprocess.run(
        ["sh", "-c", "exec chronicle --version <&-"], cwd=tmp_path, capture_output=True, check=True
    )
    assert fake_chronicle.calls()[0].stdin == "closed"


def test_configure_rejects_unknown_settings_and_none_removes(fake_chronicle):
    with pytest.raises(TypeError, match="unknown setting 'dealy'"):
        fake_chronicle.configure(dealy=1)
    fake_chronicle.configure(exit_code=3, stderr="x")
    fake_chronicle.configure(exit_code=None)
    assert fake_chronicle.config() == {"stderr": "x"}


def test_exit_code_stdout_and_stderr_settings(fake_chronicle, tmp_path):
    fake_chronicle.example_store(tmp_path)
    fake_chronicle.configure(exit_code=3, stderr="⚠ warning\n")
    result = fake_chronicle.run("knowledge", "--json", cwd=tmp_path)
    assert result.returncode == 3
    assert result.stderr.decode() == "⚠ warning\n"
    assert json.loads(result.stdout)["count"] == 6  # the command's own stdout is kept
    fake_chronicle.configure(exit_code=None, stdout="not json\n")
    result = fake_chronicle.run("knowledge", "--json", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, b"not json\n")


def test_patch_and_drop_keep_chronicle_key_order(fake_chronicle, tmp_path):
    fake_chronicle.example_store(tmp_path)
    fake_chronicle.configure(
        patch={"knowledge": {"count": 99, "extra": "new"}}, drop={"knowledge": ["items"]}
    )
    result = fake_chronicle.run("knowledge", "--json", cwd=tmp_path)
    assert result.stdout == b'{"apiVersion":1,"command":"knowledge","count":99,"extra":"new"}\n'
    result = fake_chronicle.run("context", "a.py", "--json", cwd=tmp_path)
    assert json.loads(result.stdout)["command"] == "context"  # patches are per command


def test_delay_and_grandchild(fake_chronicle, tmp_path):
    fake_chronicle.configure(delay=0.5, grandchild=True)
    started = time.monotonic()
    process = subprocess.Popen(
        ["chronicle", "--version"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.wait(timeout=30) == 0
    assert time.monotonic() - started >= 0.5
    (call,) = fake_chronicle.calls()
    assert call.grandchild is not None and pid_alive(call.grandchild)
    os.killpg(process.pid, 9)
    deadline = time.monotonic() + 3
    while pid_alive(call.grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pid_alive(call.grandchild)


def test_store_helpers_write_the_fixture(tmp_path):
    double = FakeChronicle(tmp_path / "home")
    store = double.create_store(tmp_path / "repo")
    assert isinstance(store, FakeStore)
    assert json.loads((store.chronicle_dir / "config.json").read_text())["version"] == 1
    assert (store.chronicle_dir / ".gitignore").read_text() == ".cache/\n.local/\n"
    session = store.add_session()
    event = store.add_prompt("Let's use httpx", {"a.py": (1, 2), "logo.png": "bin"})
    store.add_knowledge("decision", "Let's use httpx")
    store.add_knowledge("decision", "I'll switch to httpx.AsyncClient", event_id="evt_reply")
    memory = store.add_memory("decision", "Use httpx")
    data = store.data()
    assert re.fullmatch("ses_" + ULID.pattern, session)
    assert re.fullmatch("evt_" + ULID.pattern, event)
    assert re.fullmatch(r"mem_[0-9a-f]{12}", memory)
    assert data["prompts"] == [
        {
            "eventId": event,
            "ts": "2026-07-20T09:01:00.000Z",
            "session": session,
            "text": "Let's use httpx",
            "files": {"a.py": [1, 2], "logo.png": "bin"},
        }
    ]
    human, agent = data["knowledge"]
    assert (human["eventId"], human["session"], human["role"]) == (event, session, "human")
    assert (agent["eventId"], agent["role"], agent["ts"]) == (
        "evt_reply",
        "agent",
        "2026-07-20T09:02:00.000Z",
    )
    assert data["memory"][0]["sessions"] == [session]
    again = FakeChronicle(tmp_path / "home2").create_store(tmp_path / "repo2")
    assert again.add_session() == session  # deterministic ids


def test_the_installed_script_survives_spaces_and_runs_without_the_fixture(tmp_path):
    double = FakeChronicle(tmp_path / "a home with spaces")
    script = double.install(tmp_path / "bin dir")
    assert os.access(script, os.X_OK)
    double.create_store(tmp_path / "repo")
    result = subprocess.run(
        [str(script), "knowledge", "--json"],
        cwd=tmp_path / "repo",
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0
    assert double.calls()[0].argv == ["knowledge", "--json"]


def test_the_module_and_console_script_run_the_double(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "FAKE_CHRONICLE_HOME"}
    module = subprocess.run(
        [sys.executable, "-m", "karni_provider_testkit.fake_chronicle", "knowledge", "--json"],
        cwd=tmp_path,
        capture_output=True,
        env=env,
        check=False,
    )
    assert (module.returncode, module.stdout) == (3, b"")
    script = Path(sys.executable).with_name("fake-chronicle")
    if script.exists():
        version = subprocess.run(
            [str(script), "--version"], capture_output=True, env=env, check=False
        )
        assert version.stdout == b"0.2.0\n"


def test_running_the_double_does_not_import_pytest():
    code = (
        "import sys\n"
        "from karni_provider_testkit.fake_chronicle import main\n"
        "main(['--version'])\n"
        "print(sorted(name for name in ('pytest', 'karni_provider_testkit.plugin',\n"
        "    'karni_provider_testkit.fake_chronicle.double') if name in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "0.2.0\n[]\n"


def test_the_fixture_works_from_another_packages_tests(tmp_path):
    test_file = tmp_path / "test_elsewhere.py"
    test_file.write_text(
        textwrap.dedent(
            """
            import subprocess


            def test_uses_the_double(fake_chronicle, tmp_path):
                store = fake_chronicle.create_store(tmp_path)
                store.add_session()
                store.add_prompt("make events soft-deletable", {"apps/events/models.py": (12, 3)})
                out = subprocess.run(
                    ["chronicle", "context", "apps/events/models.py", "--json", "--limit", "5"],
                    cwd=tmp_path, capture_output=True, check=True,
                ).stdout
                assert b'"empty":false' in out
                assert fake_chronicle.calls()[0].argv[0] == "context"
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
