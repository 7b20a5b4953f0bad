"""`karni context` and `karni context --with-history [PATH]`."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from karni.agent.history import cap
from karni.cli.commands.context import parse_args, resolve_path
from karni.cli.errors import KarniError, UsageError
from karni.cli.main import main

BRIEF = """\
## Why this file looks the way it does
**Failed / superseded approaches (do NOT repeat)**
- Hard delete with ON DELETE CASCADE — reverted: it destroyed payment history
## What shaped this file
1. 2026-09-30 14:02 +12 −3 — "make events soft-deletable instead of hard delete"
"""


def context(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["context", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- argument parsing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], (False, None, False)),
        (["--with-history"], (True, None, False)),
        (["--with-history", "a.py"], (True, "a.py", False)),
        (["a.py", "--with-history"], (True, "a.py", False)),
        (["--with-history=a.py"], (True, "a.py", False)),
        (["--with-history", "--", "-odd.py"], (True, "-odd.py", False)),
        (["--with-history", "x", "--help"], (False, None, True)),
    ],
)
def test_parse_args(argv: list[str], expected: tuple[bool, str | None, bool]) -> None:
    assert parse_args(argv) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["a.py"], "PATH `a.py` needs --with-history"),
        (["--verbose"], "unknown option `--verbose`"),
        (["--with-history", "a", "b"], "takes one PATH, got `a` and `b`"),
        (["--with-history="], "PATH is empty"),
    ],
)
def test_parse_args_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_args(argv)


@pytest.mark.parametrize("path", ["apps/events/my models.py", "apps/events/it's.py", "-odd.py"])
def test_the_command_a_missing_with_history_suggests_runs_in_a_shell(
    eventsite: Path, run_cli, path: str
) -> None:
    """The suggested command is quoted: a shell runs it with PATH as one argument."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    result = run_cli("context", "--", path, cwd=eventsite)
    assert result.returncode == 2
    suggested = re.fullmatch(r"karni: PATH `.*` needs --with-history; run `(.*)`\n", result.stderr)
    assert suggested is not None, result.stderr
    command = suggested.group(1)  # unquoted, a shell would split, end or misread PATH
    ran = subprocess.run(
        [bash, "-c", command.replace("karni", f"{shlex.quote(sys.executable)} -m karni.cli", 1)],
        cwd=eventsite,
        capture_output=True,
        text=True,
    )
    assert (ran.returncode, ran.stderr) == (0, "")
    assert ran.stdout.startswith("APPS: ")


# --- PATH ---------------------------------------------------------------------------------


def test_resolve_path_relative_to_cwd_absolute_and_not_yet_existing(
    eventsite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(eventsite / "apps" / "events")
    root = str(eventsite)
    assert resolve_path(root, "models.py") == "apps/events/models.py"
    assert resolve_path(root, "../tickets/new_file.py") == "apps/tickets/new_file.py"
    assert resolve_path(root, str(eventsite / "manage.py")) == "manage.py"


@pytest.mark.parametrize("path", ["..", "../..", "/"])
def test_resolve_path_rejects_the_root_and_outside(
    eventsite: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.chdir(eventsite / "apps")
    with pytest.raises(KarniError, match=r"project root|outside the project"):
        resolve_path(str(eventsite), path)


def test_resolve_path_follows_symlinks_out_of_the_project(eventsite: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (eventsite / "link").symlink_to(outside)
    with pytest.raises(KarniError, match="outside the project"):
        resolve_path(str(eventsite), str(eventsite / "link" / "file.py"))


# --- output -------------------------------------------------------------------------------


def test_context_snapshot(eventsite: Path, monkeypatch, capsys, snapshot_text) -> None:
    monkeypatch.chdir(eventsite)
    code, out, err = context(capsys)
    assert (code, err) == (0, "")
    assert out == snapshot_text


def test_context_from_a_subfolder_matches_and_writes_nothing(
    eventsite: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(eventsite)
    _, at_root, _ = context(capsys)
    monkeypatch.chdir(eventsite / "frontend" / "src")
    _, below, _ = context(capsys)
    assert below == at_root
    assert not (eventsite / ".karni").exists()


def test_with_history_and_no_store_is_byte_for_byte_plain_context(
    eventsite: Path, monkeypatch, capsys, my_history, snapshot_text
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history,gigai-chronicle")
    monkeypatch.chdir(eventsite)
    _, plain, _ = context(capsys)
    for args in (["--with-history"], ["--with-history", "apps/events/models.py"]):
        code, out, err = context(capsys, *args)
        assert (code, out, err) == (0, plain, "")
    assert out == snapshot_text
    assert not (eventsite / ".karni").exists()


def test_with_history_and_a_store_with_nothing_recorded_is_plain_context(
    eventsite: Path, monkeypatch, capsys, my_history, record_brief
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history")
    record_brief(eventsite, "apps/other.py", "something else")
    monkeypatch.chdir(eventsite)
    _, plain, _ = context(capsys)
    assert context(capsys, "--with-history", "apps/events/models.py") == (0, plain, "")
    assert context(capsys, "--with-history") == (0, plain, "")


def test_with_history_third_party_store_snapshot(
    eventsite: Path, monkeypatch, capsys, my_history, record_brief, snapshot_text
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history")
    record_brief(eventsite, "apps/events/models.py", BRIEF)
    monkeypatch.chdir(eventsite / "apps" / "events")
    code, out, err = context(capsys, "--with-history", "models.py")
    assert (code, err) == (0, "")
    assert "HISTORY: apps/events/models.py (my-history)\n" in out
    assert "provider noise" not in out
    assert out == snapshot_text


def test_with_history_project_brief_without_path(
    eventsite: Path, monkeypatch, capsys, my_history, record_brief
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history")
    record_brief(eventsite, None, "- Decided: tickets are never deleted, only voided")
    monkeypatch.chdir(eventsite)
    _, plain, _ = context(capsys)
    code, out, _ = context(capsys, "--with-history")
    assert code == 0
    assert out == (
        plain + "HISTORY: project (my-history)\n- Decided: tickets are never deleted, only voided\n"
    )


def test_long_brief_is_capped_and_names_the_full_command(
    eventsite: Path, monkeypatch, capsys, my_history, record_brief
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history")
    long_brief = "\n".join(f"- decision {i}: " + "x" * 60 for i in range(200))
    record_brief(eventsite, "apps/events/models.py", long_brief)
    monkeypatch.chdir(eventsite)
    _, plain, _ = context(capsys)
    _, out, _ = context(capsys, "--with-history", "apps/events/models.py")
    appended = out[len(plain) :]
    assert out.startswith(plain)
    assert len(appended.rstrip("\n")) <= cap.HISTORY_TOKEN_CAP * cap.CHARS_PER_TOKEN
    assert appended.endswith(
        "\n… truncated at ~300 tokens; full brief: my-history show apps/events/models.py\n"
    )


def test_help_states_the_cap_from_history_token_cap(capsys, monkeypatch) -> None:
    code, out, _ = context(capsys, "--help")
    assert code == 0
    assert "~300 tokens (~1,200 characters" in out
    assert "truncated at ~300 tokens; full brief:" in out
    monkeypatch.setattr(cap, "HISTORY_TOKEN_CAP", 450)
    _, out, _ = context(capsys, "--help")
    assert "~450 tokens (~1,800 characters" in out


# --- as a real process ---------------------------------------------------------------------


def test_process_output_matches_in_process_and_provider_noise_is_dropped(
    eventsite: Path, monkeypatch, capsys, my_history, record_brief, run_cli
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history")
    record_brief(eventsite, "apps/events/models.py", BRIEF)
    monkeypatch.chdir(eventsite)
    _, expected, _ = context(capsys, "--with-history", "apps/events/models.py")
    result = run_cli("context", "--with-history", "apps/events/models.py", cwd=eventsite)
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, "")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--with-history", "/"], 1, "is outside the project"),
        (["--with-history", "."], 1, "is the project root"),
        (["--with-history", ".."], 1, "is outside the project"),
        (["apps/events/models.py"], 2, "needs --with-history"),
        (["--bogus"], 2, "unknown option `--bogus`"),
    ],
)
def test_bad_path_is_one_line_on_stderr_and_nothing_on_stdout(
    eventsite: Path, run_cli, args: list[str], code: int, message: str
) -> None:
    result = run_cli("context", *args, cwd=eventsite)
    assert result.returncode == code
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("karni: ")
    assert message in result.stderr


def test_outside_a_project_names_what_was_looked_for(tmp_path: Path, run_cli) -> None:
    result = run_cli("context", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert "looked for manage.py or karni.rules.py" in result.stderr
    assert result.stderr.count("\n") == 1


def test_context_never_creates_local_state(eventsite: Path, run_cli) -> None:
    for args in ([], ["--with-history"], ["--with-history", "manage.py"]):
        assert run_cli("context", *args, cwd=eventsite).returncode == 0
    assert not (eventsite / ".karni").exists()
    assert not os.path.exists(eventsite / ".karni" / "local")


# --- the Chronicle double -------------------------------------------------------------------


@pytest.fixture
def chronicle_project(eventsite: Path, fake_chronicle, monkeypatch) -> Path:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    store = fake_chronicle.create_store(eventsite)
    session = store.add_session()
    store.add_prompt(
        "make events soft-deletable instead of hard delete", {"apps/events/models.py": (12, 3)}
    )
    store.add_memory(
        "failed_approach",
        "Hard delete with ON DELETE CASCADE — reverted: it destroyed payment history",
        sessions=[session],
    )
    return eventsite


def test_with_history_chronicle_double_snapshot(
    chronicle_project: Path, fake_chronicle, monkeypatch, capsys, snapshot_text
) -> None:
    monkeypatch.chdir(chronicle_project / "apps")
    _, plain, _ = context(capsys)
    code, out, err = context(capsys, "--with-history", "events/models.py")
    assert (code, err) == (0, "")
    assert out.startswith(plain + "HISTORY: apps/events/models.py (gigai-chronicle)\n")
    assert out == snapshot_text
    assert [call.argv for call in fake_chronicle.calls()] == [
        ["context", "apps/events/models.py", "--json", "--limit", "5"]
    ]


def test_with_history_chronicle_double_in_a_real_process(
    chronicle_project: Path, fake_chronicle, monkeypatch, capsys, run_cli
) -> None:
    monkeypatch.chdir(chronicle_project)
    _, expected, _ = context(capsys, "--with-history", "apps/events/models.py")
    fake_chronicle.configure(stderr="⚠ chronicle warning on stderr\n")
    result = run_cli("context", "--with-history", "apps/events/models.py", cwd=chronicle_project)
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, "")


def test_with_history_chronicle_double_with_nothing_recorded_is_plain(
    chronicle_project: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(chronicle_project)
    _, plain, _ = context(capsys)
    assert context(capsys, "--with-history", "apps/tickets/models.py") == (0, plain, "")


def test_a_symlinked_file_is_briefed_under_its_own_path(eventsite: Path) -> None:
    (eventsite / "NOTES.md").symlink_to(eventsite / "manage.py")
    assert resolve_path(str(eventsite), str(eventsite / "NOTES.md")) == "NOTES.md"
