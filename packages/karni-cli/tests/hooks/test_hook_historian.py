"""After a session the hook starts the historian detached, one run at a time."""

from __future__ import annotations

import os
from pathlib import Path

from karni.cli.hooks.local import LOG_FILE


def stop_event(project: Path, transcript: Path, name: str = "Stop") -> dict:
    return {
        "session_id": "s-1",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": name,
        "stop_hook_active": False,
    }


def log_lines(project: Path) -> list[str]:
    path = project / ".karni" / "local" / LOG_FILE
    return path.read_text().splitlines() if path.exists() else []


def test_the_hook_returns_while_the_historian_still_runs(project, run_hook, fake_historian, waiter):
    transcript = project / "session.jsonl"
    transcript.write_text("{}\n")
    result = run_hook(project, stop_event(project, transcript), "claude-code", "Stop")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert fake_historian.release_after_start() == [
        ["--project", str(project), "ingest", "--from", str(transcript)],
        ["--project", str(project), "run"],
    ]
    waiter(lambda: any("run` exited 0" in line for line in log_lines(project)), "the log")
    assert any("started" in line and "claude-code Stop" in line for line in log_lines(project))


def test_two_runs_never_overlap(project, run_hook, fake_historian, waiter):
    first, second = project / "one.jsonl", project / "two.jsonl"
    first.write_text("{}\n")
    second.write_text("{}\n")
    run_hook(project, stop_event(project, first), "claude-code", "Stop")
    waiter(lambda: fake_historian.records(), "the first run")
    run_hook(project, stop_event(project, second, "SessionEnd"), "claude-code", "SessionEnd")
    fake_historian.release.touch()
    waiter(lambda: len(fake_historian.ended()) == 4, "both runs")
    records = fake_historian.records()
    assert [what for what, _, _ in records] == ["start", "end"] * 4
    ingested = [arguments[-1] for arguments in fake_historian.ended() if "ingest" in arguments]
    assert ingested == [str(first), str(second)]


def test_without_a_historian_the_log_says_so(project, run_hook, monkeypatch, tmp_path):
    monkeypatch.setenv("KARNI_HISTORIAN", str(tmp_path / "missing"))
    transcript = project / "session.jsonl"
    transcript.write_text("{}\n")
    result = run_hook(project, stop_event(project, transcript), "claude-code", "Stop")
    assert (result.returncode, result.stdout) == (0, "")
    assert "karni-historian is not installed" in log_lines(project)[-1]


def test_a_failing_historian_stays_in_the_log(project, run_hook, tmp_path, monkeypatch, waiter):
    failing = tmp_path / "failing-historian"
    failing.write_text("#!/bin/sh\necho 'historian: the store is locked' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("KARNI_HISTORIAN", str(failing))
    transcript = project / "session.jsonl"
    transcript.write_text("{}\n")
    result = run_hook(project, stop_event(project, transcript), "claude-code", "Stop")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    waiter(lambda: any("exited 1" in line for line in log_lines(project)), "the failure")
    lines = log_lines(project)
    assert "historian: the store is locked" in lines
    assert not any(" run` exited" in line for line in lines)  # no run after a failed ingest


def test_a_karni_folder_in_the_repository_is_not_imported_by_the_background_run(
    project, run_hook, fake_historian, waiter, tmp_path
):
    """The background run starts in the project's folder; `python -m` would import its `karni/`."""
    planted = tmp_path / "planted-code-ran"
    for package in ("karni", "karni/cli", "karni/cli/hooks"):
        (project / package).mkdir(exist_ok=True)
        (project / package / "__init__.py").write_text(f"open({str(planted)!r}, 'w')\n")
    (project / "karni/cli/hooks/background.py").write_text(f"open({str(planted)!r}, 'w')\n")
    transcript = project / "session.jsonl"
    transcript.write_text("{}\n")
    result = run_hook(project, stop_event(project, transcript), "claude-code", "Stop")
    assert result.returncode == 0
    assert fake_historian.release_after_start()[0][-2:] == ["--from", str(transcript)]
    waiter(lambda: any("run` exited 0" in line for line in log_lines(project)), "the log")
    assert not planted.exists()


def test_a_historian_in_the_working_folder_is_never_found(tmp_path, monkeypatch):
    from karni.cli.hooks import historian

    planted = tmp_path / "project" / "karni-historian"
    planted.parent.mkdir()
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o755)
    installed = tmp_path / "bin" / "karni-historian"
    installed.parent.mkdir()
    installed.write_text("#!/bin/sh\n")
    installed.chmod(0o755)
    monkeypatch.delenv("KARNI_HISTORIAN", raising=False)
    monkeypatch.setattr(historian.sys, "executable", str(tmp_path / "elsewhere" / "python"))
    monkeypatch.chdir(planted.parent)
    monkeypatch.setenv("PATH", f".{os.pathsep}{os.pathsep}project")
    assert historian.find_historian() is None
    monkeypatch.setenv("PATH", f".{os.pathsep}{installed.parent}")
    assert historian.find_historian() == str(installed)


def test_share_ends_the_run_with_share_auto(project, run_hook, fake_historian, waiter):
    transcript = project / "session.jsonl"
    transcript.write_text("{}\n")
    result = run_hook(project, stop_event(project, transcript), "claude-code", "Stop", "--share")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert fake_historian.release_after_start(3) == [
        ["--project", str(project), "ingest", "--from", str(transcript)],
        ["--project", str(project), "run"],
        ["--project", str(project), "share", "--auto"],
    ]
    waiter(lambda: any("share --auto` exited 0" in line for line in log_lines(project)), "the log")
