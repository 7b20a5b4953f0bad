"""Fault cases: a broken provider, store or disk never costs the user Karni's output.

Each test drives the real commands in a subprocess (see ``conftest.py``) and
asserts the exact output a user would get. Numbers in the test names follow
the list in ``docs/reliability.md``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from karni_it.interrupts import NOT_PLANTED, PLANT_SIGINT

FILE = "apps/events/models.py"

GOOD = """
    class Good:
        name = "good"

        def detect(self, root):
            return True

        def context(self, root, path):
            return "good brief for " + path
"""

GOOD_BLOCK = f"HISTORY: {FILE} (good)\ngood brief for {FILE}\n"


def install(faults: Any, source: str, *, names: tuple[str, ...] = ("fault",)) -> None:
    """Install the healthy ``good`` provider and, as ``names``, ``Fault`` from ``source``."""
    faults.install("good-history", {"good": "good_history:Good"}, {"good_history.py": GOOD})
    faults.install(
        "fault-history",
        {name: "fault_history:Fault" for name in names},
        {"fault_history.py": source},
    )
    faults.env["KARNI_HISTORY_PROVIDERS"] = ",".join(("good", *names))


def inventory(faults: Any) -> bytes:
    """The plain inventory, from ``karni context`` with no provider at all."""
    plain = faults.karni("context", env={"KARNI_HISTORY_PROVIDERS": ""})
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith(b"APPS: ")
    return bytes(plain.stdout)


def assert_context_unharmed(faults: Any, extra: bytes = b"") -> None:
    """``karni context --with-history FILE``: the inventory, ``extra`` and good's brief only.

    ``extra`` is the faulty provider's own block, when it has one: ``fault``
    sorts before ``good``.
    """
    expected = inventory(faults) + extra + GOOD_BLOCK.encode()
    result = faults.karni("context", "--with-history", FILE)
    assert result.stderr == b""
    assert result.stdout == expected
    assert result.returncode == 0


def doctor_failures(faults: Any, loaded: tuple[str, ...] = ("good",)) -> list[dict[str, Any]]:
    """``karni doctor --json`` parses, exits 0, shows ``loaded``; the load failures."""
    result = faults.karni("doctor", "--json")
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    assert tuple(p["name"] for p in facts["history"]["providers"]) == loaded
    return list(facts["history"]["failures"])


def assert_rules_unharmed(faults: Any) -> None:
    """``karni rules`` gives the same output as with no provider installed."""
    baseline = faults.karni(
        "rules", env={"KARNI_HISTORY_PROVIDERS": "", "KARNI_AGENT_CONDITIONS": "history"}
    )
    result = faults.karni("rules", env={"KARNI_AGENT_CONDITIONS": "history"})
    assert result.returncode == baseline.returncode == 0
    assert result.stdout == baseline.stdout


# --- providers: loading ---------------------------------------------------------------------

FAULT_CLASS = textwrap.dedent(GOOD).replace("Good", "Fault").replace('"good"', '"fault"')
AT_IMPORT = "{statement}\n" + FAULT_CLASS
IN_INIT = FAULT_CLASS + "\n    def __init__(self):\n        {statement}\n"


def _loading_fault(where: str, statement: str) -> str:
    template = AT_IMPORT if where == "import" else IN_INIT
    return "import os, sys, threading\n" + template.replace("{statement}", statement)


@pytest.mark.parametrize("where", ["import", "init"])
@pytest.mark.parametrize("statement", ["raise SystemExit(3)", "raise GeneratorExit"])
def test_01_02_exit_exceptions_while_loading(faults, where, statement):
    install(faults, _loading_fault(where, statement.replace("\n", "")))
    assert_context_unharmed(faults)
    (failure,) = doctor_failures(faults)
    assert failure["name"] == "fault"
    kind = statement.split()[1].split("(")[0]
    assert kind in failure["error"] and "\n" not in failure["error"]
    assert_rules_unharmed(faults)


@pytest.mark.parametrize("where", ["import", "init"])
@pytest.mark.parametrize(
    "statement",
    [
        "print('leak on stdout')",
        "os.write(1, b'leak on fd 1\\n')",
        "os.write(2, b'leak on fd 2\\n')",
    ],
)
def test_03_output_while_loading(faults, where, statement):
    source = _loading_fault(where, statement).replace("return True", "return False", 1)
    install(faults, source)
    assert_context_unharmed(faults)
    assert doctor_failures(faults, loaded=("fault", "good")) == []
    assert_rules_unharmed(faults)


@pytest.mark.parametrize(
    "where",
    ["import", "init", "factory"],
)
def test_06_a_hang_while_loading_has_the_deadline(faults, where):
    hang = "threading.Event().wait()"
    if where == "factory":
        source = "import threading\n\ndef Fault():\n    " + hang + "\n"
    else:
        source = _loading_fault(where, hang)
    install(faults, source)
    faults.env["KARNI_PROVIDER_TIMEOUT"] = "1"
    assert_context_unharmed(faults)
    (failure,) = doctor_failures(faults)
    assert "did not load within 1 s" in failure["error"]


def test_11_two_providers_with_one_name(faults):
    twins = GOOD.replace("Good", "Fault").replace('"good"', '"twin"')
    install(faults, twins, names=("twin-a", "twin-b"))
    expected = inventory(faults) + GOOD_BLOCK.encode()
    expected += f"HISTORY: {FILE} (twin)\ngood brief for {FILE}\n".encode()
    result = faults.karni("context", "--with-history", FILE)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == expected
    result = faults.karni("doctor", "--json")
    (failure,) = json.loads(result.stdout)["history"]["failures"]
    assert failure["name"] == "twin-b"
    assert "`twin-a`" in failure["error"] and "`twin-b`" in failure["error"]


# --- providers: calls -----------------------------------------------------------------------

CALLING = "import atexit, os, signal, sys, threading, time\n" + FAULT_CLASS.replace(
    'return "good brief for " + path', "{body}"
)


def _calling_fault(body: str) -> str:
    """The ``Fault`` provider whose ``context`` runs ``body``."""
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    return CALLING.replace("        {body}", indented)


LINGERING_WRITERS = """
def noise():
    while True:
        for write in (sys.stdout.write, sys.stderr.write, sys.__stdout__.write):
            try:
                write("late noise\\n")
                sys.__stdout__.flush()
            except Exception:
                pass
        for fd in (1, 2):
            try:
                os.write(fd, b"late noise on a descriptor\\n")
            except OSError:
                pass
        time.sleep(0.001)
threading.Thread(target=noise, daemon=True).start()
atexit.register(noise)
return None
"""


def test_04_threads_and_atexit_write_after_the_call(faults):
    install(faults, _calling_fault(LINGERING_WRITERS))
    assert_context_unharmed(faults)


def test_05_a_thread_that_never_ends(faults):
    body = "threading.Thread(target=threading.Event().wait, daemon=False).start()\nreturn 'x'"
    install(faults, _calling_fault(body))
    assert_context_unharmed(faults, f"HISTORY: {FILE} (fault)\nx\n".encode())


def test_guard_a_hang_in_context_has_the_deadline(faults):
    install(faults, _calling_fault("threading.Event().wait()"))
    faults.env["KARNI_PROVIDER_TIMEOUT"] = "1"
    assert_context_unharmed(faults)


def test_07_a_str_subclass_that_raises(faults):
    body = """
class Hostile(str):
    def __len__(self):
        raise RuntimeError("no length")
    def find(self, *args):
        raise RuntimeError("no find")
    def splitlines(self, *args):
        raise RuntimeError("no lines")
return Hostile("a hostile brief")
"""
    install(faults, _calling_fault(body))
    assert_context_unharmed(faults, f"HISTORY: {FILE} (fault)\na hostile brief\n".encode())


def test_08_a_lone_surrogate(faults):
    install(faults, _calling_fault('return "before \\ud800 after"'))
    assert_context_unharmed(faults, f"HISTORY: {FILE} (fault)\nbefore \ufffd after\n".encode())


def test_09_closing_stdout(faults):
    body = "sys.__stdout__.close()\nsys.stdout.close()\nos.close(1)\nreturn None"
    install(faults, _calling_fault(body))
    assert_context_unharmed(faults)


ENDINGS = {
    "os._exit(7)": "exit status 7",
    "os.abort()": "signal 6",
    "os.kill(os.getpid(), signal.SIGKILL)": "signal 9",
}


@pytest.mark.parametrize("ending", ENDINGS)
def test_10_a_call_that_ends_its_process_in_context(faults, ending):
    install(faults, _calling_fault(ending))
    assert_context_unharmed(faults)
    project = faults.karni("context", "--with-history")
    assert (project.returncode, project.stderr) == (0, b"")
    assert project.stdout == inventory(faults)  # good has no project brief


def _ending_in_detect(ending: str) -> str:
    source = _calling_fault('return "fault brief for " + path')
    return source.replace("        return True", f"        {ending}", 1)


@pytest.mark.parametrize("ending", ENDINGS)
def test_10_a_call_that_ends_its_process_in_detect(faults, ending):
    source = _ending_in_detect(ending)
    assert source.count(ending) == 1
    install(faults, source)
    assert_context_unharmed(faults)
    assert_rules_unharmed(faults)
    (failure,) = doctor_failures(faults)
    assert failure["name"] == "fault"
    assert failure["error"] == (
        "history provider `fault` from `fault_history:Fault` (fault-history): its `detect` "
        f"ended its process ({ENDINGS[ending]}); Karni carried on without it: fix or reinstall "
        "that package"
    )
    text = faults.karni("doctor")
    assert text.returncode == 0 and text.stderr == b""
    assert b"history providers that failed to load:\n  fault: history provider `fault`" in (
        text.stdout
    )


def test_04_a_forked_child_cannot_hold_the_output(faults, tmp_path):
    pid_file = tmp_path / "child.pid"
    body = f"""
if os.fork() == 0:
    with open({str(pid_file)!r}, "w") as handle:
        handle.write(str(os.getpid()))
    for attempt in range(2):
        try:
            sys.stdout.write("child noise\\n")
            sys.stdout.flush()
            os.write(1, b"child noise on fd 1\\n")
        except Exception:
            pass
    time.sleep(3600)  # until the test ends it
    os._exit(0)
return None
"""
    install(faults, _calling_fault(body))
    expected = inventory(faults) + GOOD_BLOCK.encode()
    command = [str(Path(sys.executable).parent / "karni"), "context", "--with-history", FILE]
    try:
        with subprocess.Popen(
            command, cwd=faults.project, env=faults.env, stdout=subprocess.PIPE
        ) as process:
            try:
                # the output ends only once every holder of the pipe has closed it
                stdout, _ = process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                pytest.fail("a forked child of a provider kept Karni's output open")
        assert stdout == expected
        assert process.returncode == 0
    finally:
        _end_child(pid_file)


def _end_child(pid_file: Path) -> None:
    for _ in range(3000):  # the child may not have written its pid yet
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.01)
    else:
        return
    try:
        os.kill(int(pid_file.read_text()), 9)
    except ProcessLookupError:
        pass


# --- providers: the PATH argument -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "problem"),
    [("apps/" + "a/" * 2100 + "x.py", b"too long"), (b"apps/\xff\xfe.py", b"not valid UTF-8")],
    ids=["4k", "undecodable"],
)
def test_12_an_unusable_path(faults, path, problem):
    install(faults, GOOD.replace("Good", "Fault").replace('"good"', '"fault"'))
    result = faults.karni("context", "--with-history", path)
    assert result.stdout == inventory(faults)
    (line,) = result.stderr.decode("utf-8").splitlines()
    assert line.startswith("karni: PATH `apps/") and problem.decode() in line
    assert b"\xff" not in result.stderr
    assert result.returncode == 0


# --- the command line -----------------------------------------------------------------------

INTERRUPT_ON_IMPORT = (
    PLANT_SIGINT
    + """
import os, sys

class InterruptOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("FAULT_INTERRUPT_MODULE"):
            sys.meta_path.remove(self)
            plant_sigint()
            for _ in range(1000):  # the handler runs between bytecodes
                pass
        return None

sys.meta_path.insert(0, InterruptOnImport())
"""
)

CONFIG_SET = ("config", "set", "suggest_tools", "false")


def _config_set_interrupted_at(
    faults: Any, module: str, entry: str, sigint: signal.Handlers
) -> subprocess.CompletedProcess[bytes]:
    """``karni config set suggest_tools false``, with SIGINT planted when ``module`` is imported."""
    (faults.site / "sitecustomize.py").write_text(INTERRUPT_ON_IMPORT, encoding="utf-8")
    faults.env["FAULT_INTERRUPT_MODULE"] = module
    if entry == "python -m":
        return faults.run(sys.executable, "-m", "karni.cli", *CONFIG_SET, sigint=sigint)
    return faults.karni(*CONFIG_SET, sigint=sigint)


@pytest.mark.parametrize("module", ["karni.cli.commands.config", "karni.cli.errors"])
@pytest.mark.parametrize("entry", ["console-script", "python -m"])
def test_13_ctrl_c_while_importing(faults, module, entry):
    result = _config_set_interrupted_at(faults, module, entry, signal.SIG_DFL)
    faults.assert_interrupt_planted()
    assert (result.returncode, result.stderr, result.stdout) == (130, b"karni: interrupted\n", b"")
    assert not (faults.project / ".karni" / "config.toml").exists()


@pytest.mark.parametrize("entry", ["console-script", "python -m"])
def test_13_started_with_sigint_ignored_karni_keeps_it_ignored(faults, entry):
    """As a shell asks of a background job: a SIGINT Karni was started to ignore is ignored."""
    result = _config_set_interrupted_at(faults, "karni.cli.commands.config", entry, signal.SIG_IGN)
    assert faults.sigint_report.read_text(encoding="utf-8") == NOT_PLANTED
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    config = (faults.project / ".karni" / "config.toml").read_text(encoding="utf-8")
    assert "suggest_tools = false" in config


def test_guard_an_interrupt_that_cannot_be_planted_fails_the_case_and_says_why(faults):
    """A case whose command was started with SIGINT ignored fails with that, not another error."""
    _config_set_interrupted_at(faults, "karni.cli.errors", "console-script", signal.SIG_IGN)
    with pytest.raises(pytest.fail.Exception) as failure:
        faults.assert_interrupt_planted()
    assert str(failure.value) == NOT_PLANTED


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_14_a_killed_write_leaves_nothing_behind(faults):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q"], cwd=faults.project, check=True)
    first = faults.karni("config", "set", "suggest_tools", "false")
    assert first.returncode == 0, first.stderr
    leftover = faults.project / ".karni" / f".config.toml.{_dead_pid()}.0a1b2c3d.tmp"
    leftover.write_text("tip = tr", encoding="utf-8")  # what a SIGKILL mid-write leaves
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", ".karni"],
        cwd=faults.project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert leftover.name not in status.stdout
    second = faults.karni("config", "set", "suggest_tools", "true")
    assert second.returncode == 0, second.stderr
    assert not leftover.exists()
    assert (
        sorted(p.name for p in (faults.project / ".karni").iterdir() if p.name.endswith(".tmp"))
        == []
    )


# --- the historian --------------------------------------------------------------------------

FIXTURE = Path(__file__).resolve().parents[2] / "packages/karni-historian/tests/fixtures"


def transcript(faults: Any, folder: Path, prompt: str | None = None, copies: int = 1) -> Path:
    """A Claude Code session file for the project in ``folder``, optionally with ``prompt``."""
    text = (FIXTURE / "claude_code_session.jsonl").read_text(encoding="utf-8")
    text = text.replace("__PROJECT__", str(faults.project))
    if prompt is not None:
        text = text.replace(
            "Rename the total() helper in cart.py to subtotal()", json.dumps(prompt)[1:-1]
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "7d3e2a10-5c4b-4f1e-9a2d-3b8c6e1f0a42.jsonl"
    path.write_text("".join(text.replace("a1f0c2d4", f"{n:08x}") for n in range(copies)))
    return path


def historian(faults: Any, *args: str, **options: Any) -> subprocess.CompletedProcess[bytes]:
    return faults.run("karni-historian", *args, **options)


def assert_one_line(result: subprocess.CompletedProcess[bytes], *words: str) -> str:
    assert result.returncode == 1
    text = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in text
    lines = [line for line in text.splitlines() if line.startswith("karni-historian: ")]
    assert len(lines) == 1, text
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_15_a_fifo_is_never_opened(faults):
    sessions = faults.project / "transcripts"
    transcript(faults, sessions)
    os.mkfifo(sessions / "a-pipe.jsonl")
    chronicle = faults.project / ".chronicle" / "sessions"
    chronicle.mkdir(parents=True)
    os.mkfifo(chronicle / "pipe.jsonl")
    result = historian(faults, "ingest", "--from", str(sessions), timeout=60)
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    again = historian(faults, "ingest", timeout=60)
    assert again.returncode == 0, again.stderr
    direct = historian(faults, "ingest", "--from", str(sessions / "a-pipe.jsonl"), timeout=60)
    assert direct.returncode == 2 and b"not a regular file" in direct.stderr


def test_16_a_busy_store(faults):
    transcript(faults, faults.project / "transcripts")
    assert historian(faults, "ingest", "--from", "transcripts").returncode == 0
    holder = sqlite3.connect(
        faults.project / ".karni" / "local" / "historian.db", isolation_level=None
    )
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = historian(
            faults, "ingest", "--from", "transcripts", env={"KARNI_HISTORIAN_BUSY_TIMEOUT": "0.2"}
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_one_line(result, "historian.db", "busy", "another karni-historian")


def test_17_render_writes_only_xml_characters(faults):
    transcript(
        faults,
        faults.project / "transcripts",
        prompt="Rename \x01the total()\x1b[31m helper in cart.py",
    )
    assert historian(faults, "ingest", "--from", "transcripts").returncode == 0
    assert historian(faults, "wrapup", "4").returncode == 0
    result = historian(faults, "render")
    assert result.returncode == 0, result.stderr
    import xml.etree.ElementTree as ElementTree

    ElementTree.fromstring(result.stdout)  # well-formed
    assert b"\x01" not in result.stdout and b"\x1b" not in result.stdout
    assert b"helper in cart.py" in result.stdout


def _limit_file_size(limit: int) -> Any:
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_18_disk_full_during_ingest(faults):
    transcript(faults, faults.project / "first")
    assert historian(faults, "ingest", "--from", "first").returncode == 0
    before = historian(faults, "sessions").stdout
    database = faults.project / ".karni" / "local" / "historian.db"
    size = database.stat().st_size
    big = transcript(faults, faults.project / "second", copies=400)
    big.rename(big.with_name("0c9e0000-0000-4000-8000-000000000001.jsonl"))
    result = historian(
        faults, "ingest", "--from", "second", preexec_fn=_limit_file_size(size + 64 * 1024)
    )
    assert_one_line(result, "historian.db", "free some space")
    assert historian(faults, "sessions").stdout == before
    assert sqlite3.connect(database).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _read_only(project: Path) -> list[str]:
    """A command prefix that runs with ``project`` read-only, or skip when it cannot."""
    if os.geteuid() != 0:
        project.chmod(0o555)
        return []
    unshare = shutil.which("unshare")
    mount = f"mount --bind '{project}' '{project}' && mount -o remount,bind,ro '{project}'"
    if unshare is None:
        pytest.skip("root without unshare cannot make a folder read-only")
    probe = subprocess.run([unshare, "-m", "sh", "-c", mount], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot mount the project read-only here")
    return [unshare, "-m", "sh", "-c", mount + ' && exec "$@"', "read-only"]


def test_19_a_read_only_project(faults):
    transcript(faults, faults.project / "transcripts")
    prefix = _read_only(faults.project)
    try:
        result = subprocess.run(
            [
                *prefix,
                str(Path(sys.executable).parent / "karni-historian"),
                "ingest",
                "--from",
                "transcripts",
            ],
            cwd=faults.project,
            env=faults.env,
            capture_output=True,
            timeout=60,
        )
    finally:
        faults.project.chmod(0o755)
    assert_one_line(result, "historian store", ".karni", "writable")


def test_guard_ctrl_c_is_not_caught_as_a_provider_failure(faults):
    """The one exception a call does not keep: a real Ctrl-C still ends Karni with 130."""
    install(faults, PLANT_SIGINT + _calling_fault("plant_sigint()\nthreading.Event().wait()"))
    result = faults.karni("context", "--with-history", FILE)
    faults.assert_interrupt_planted()
    assert result.returncode == 130
    assert result.stderr == b"karni: interrupted\n"
    assert result.stdout == inventory(faults)


def test_guard_started_with_sigint_ignored_a_provider_sees_it_ignored(faults):
    """Karni does not restore a SIGINT it was started to ignore, for itself or its providers."""
    body = "plant_sigint()\nreturn f'SIGINT here: {signal.getsignal(signal.SIGINT)!r}'"
    install(faults, PLANT_SIGINT + _calling_fault(body))
    result = faults.karni("context", "--with-history", FILE, sigint=signal.SIG_IGN)
    assert faults.sigint_report.read_text(encoding="utf-8") == NOT_PLANTED
    block = f"HISTORY: {FILE} (fault)\nSIGINT here: <Handlers.SIG_IGN: 1>\n"
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == inventory(faults) + block.encode() + GOOD_BLOCK.encode()
