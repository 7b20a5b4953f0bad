"""The one-time suggestion: shown at most once per project, and never when it should not be."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from karni.agent.common.ci import CI_VARIABLES, in_ci
from karni.cli.config.state import STATE_FILE, claim_once, read_state
from karni.cli.distributions import OWN_PROVIDER_DISTRIBUTIONS, is_third_party
from karni.cli.main import main
from karni.cli.tip import STATE_KEY, TIP

README = Path(__file__).resolve().parents[1] / "README.md"


def _documented_tip() -> str:
    """The tip as the README's "one-time suggestion" section shows it."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The one-time suggestion") :]
    block = section[section.index("```\n") + 4 :]
    return block[: block.index("```")]


DOCUMENTED_TIP = _documented_tip()


@pytest.fixture
def project(eventsite: Path, monkeypatch, capsys) -> Path:
    """The example with fresh adapters, so `karni check` is clean; cwd is its root."""
    monkeypatch.chdir(eventsite)
    assert main(["rules", "sync"]) == 0
    capsys.readouterr()
    return eventsite


def doctor(capsys, *args: str) -> str:
    assert main(["doctor", *args]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_the_tip_is_the_one_the_readme_documents() -> None:
    assert DOCUMENTED_TIP.startswith("tip: no prompt-history store found.")
    assert TIP == DOCUMENTED_TIP
    assert all(len(line) <= 80 for line in TIP.splitlines())


def test_the_tips_own_silencing_command_silences_it(project: Path, capsys) -> None:
    command = TIP.splitlines()[-1].split("Silence this: ", 1)[1].split()
    assert command[0] == "karni"
    assert main(command[1:]) == 0
    capsys.readouterr()
    assert "tip:" not in doctor(capsys)
    assert not (project / ".karni" / "local").exists()  # suppressed, not used up


def test_doctor_shows_it_once_after_the_report(project: Path, capsys) -> None:
    first = doctor(capsys)
    assert first.endswith("\n" + DOCUMENTED_TIP)
    assert first.count("tip:") == 1
    second = doctor(capsys)
    assert "tip:" not in second
    assert second == first[: -len(DOCUMENTED_TIP)]
    assert read_state(str(project)) == {STATE_KEY: True}
    assert (project / ".karni" / "local" / ".gitignore").read_text() == "*\n"


def test_clean_check_shows_it_on_stderr_only(project: Path, capsys) -> None:
    assert main(["check"]) == 0
    captured = capsys.readouterr()
    assert captured.out.endswith("karni check: ok\n")
    assert "tip:" not in captured.out
    assert captured.err == DOCUMENTED_TIP
    assert main(["check"]) == 0
    assert capsys.readouterr().err == ""
    assert "tip:" not in doctor(capsys)


def test_failing_check_does_not_show_it(eventsite: Path, monkeypatch, capsys) -> None:
    (eventsite / "AGENTS.md").unlink()  # a missing adapter: the check fails
    monkeypatch.chdir(eventsite)
    assert main(["check"]) == 1
    assert capsys.readouterr().err == ""
    assert not (eventsite / ".karni").exists()


def test_own_provider_without_a_store_still_gets_the_tip(
    project: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    assert doctor(capsys).endswith(DOCUMENTED_TIP)


def test_not_shown_when_a_provider_detects_a_store(project: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    (project / ".chronicle").mkdir()
    assert "tip:" not in doctor(capsys)
    assert main(["check"]) == 0
    assert capsys.readouterr().err == ""
    assert not (project / ".karni" / "local").exists()


def test_not_shown_when_a_third_party_provider_is_installed(
    project: Path, monkeypatch, capsys, my_history
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history,gigai-chronicle")
    assert not (project / ".my-history").exists()  # installed, but no store
    assert "tip:" not in doctor(capsys)
    assert not (project / ".karni" / "local").exists()


@pytest.mark.parametrize(
    ("distribution", "name"), [("karni-historian", "historian"), ("karni-history-adr", "adr")]
)
def test_not_shown_when_another_of_karnis_providers_is_installed(
    project: Path, monkeypatch, capsys, site_dir, make_distribution, distribution: str, name: str
) -> None:
    """The tip suggests Chronicle: Karni's historian or ADR provider is a choice made already."""
    module = f"fake_{name}"
    source = f"class P:\n    name = {name!r}\n    def detect(self, root):\n        return False\n"
    source += "    def context(self, root, path):\n        return None\n"
    make_distribution(
        site_dir,
        distribution,
        "0.1.0",
        {"karni.history_providers": {name: f"{module}:P"}},
        {f"{module}.py": source},
    )
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", f"{name},gigai-chronicle")
    out = doctor(capsys)
    assert f"  {name} " in out and "no store" in out
    assert "tip:" not in out
    assert main(["check"]) == 0
    assert "tip:" not in capsys.readouterr().err
    assert not (project / ".karni" / "local").exists()


def test_shown_with_only_the_built_in_chronicle_provider(
    project: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    assert doctor(capsys).endswith(TIP)


def test_not_shown_when_a_third_party_provider_fails_to_load(
    project: Path, monkeypatch, capsys, site_dir, make_distribution
) -> None:
    make_distribution(
        site_dir, "odd-history", "1.0", {"karni.history_providers": {"odd": "odd_missing:P"}}, {}
    )
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "odd")
    out = doctor(capsys)
    assert "odd: history provider `odd`" in out
    assert "tip:" not in out


@pytest.mark.parametrize("variable", CI_VARIABLES)
def test_not_shown_in_ci(project: Path, monkeypatch, capsys, variable: str) -> None:
    monkeypatch.setenv(variable, "true")
    assert "tip:" not in doctor(capsys)
    assert main(["check"]) == 0
    assert capsys.readouterr().err == ""
    assert not (project / ".karni" / "local").exists()


@pytest.mark.parametrize("value", ["0", "false", "No", "OFF", "", " "])
def test_false_values_do_not_count_as_ci(project: Path, monkeypatch, capsys, value: str) -> None:
    for variable in CI_VARIABLES:
        monkeypatch.setenv(variable, value)
    assert doctor(capsys).endswith(DOCUMENTED_TIP)


def test_in_ci() -> None:
    assert in_ci({}) is False
    assert in_ci({"CI": "false", "GITLAB_CI": "0"}) is False
    assert in_ci({"JENKINS_URL": "http://jenkins"}) is True
    assert in_ci({"TF_BUILD": "True"}) is True
    assert len(CI_VARIABLES) == 10


@pytest.mark.parametrize("scope", ["project", "global"])
def test_not_shown_with_suggest_tools_false(project: Path, capsys, scope: str) -> None:
    args = ["config", "set", "suggest_tools", "false"] + (["--global"] if scope == "global" else [])
    assert main(args) == 0
    capsys.readouterr()
    assert "tip:" not in doctor(capsys)
    assert not (project / ".karni" / "local").exists()


def test_project_true_overrides_global_false(project: Path, capsys) -> None:
    main(["config", "set", "--global", "suggest_tools", "false"])
    main(["config", "set", "suggest_tools", "true"])
    capsys.readouterr()
    assert doctor(capsys).endswith(DOCUMENTED_TIP)


def test_invalid_settings_keep_it_quiet(project: Path, capsys) -> None:
    (project / ".karni").mkdir()
    (project / ".karni" / "config.toml").write_text("suggest_tools = 'maybe'\n")
    assert "tip:" not in doctor(capsys)


def test_quiet_and_json_neither_show_nor_use_it_up(project: Path, capsys) -> None:
    assert "tip:" not in doctor(capsys, "-q")
    assert "tip:" not in doctor(capsys, "--quiet")
    assert "tip:" not in doctor(capsys, "--json")
    assert main(["check", "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert not (project / ".karni" / "local").exists()
    assert doctor(capsys).endswith(DOCUMENTED_TIP)


def test_corrupt_state_is_treated_as_empty_and_rewritten(project: Path, capsys) -> None:
    state = project / ".karni" / "local" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text('{"history_tip_sh')
    assert doctor(capsys).endswith(DOCUMENTED_TIP)
    assert json.loads(state.read_text()) == {STATE_KEY: True}
    state.write_text("[1, 2]")
    assert read_state(str(project)) == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'\xef\xbb\xbf{"history_tip_shown": true}', {STATE_KEY: True}),  # saved by an editor
        (b'{"history_tip_shown": true}', {STATE_KEY: True}),
        (b'\xef\xbb\xbf\xef\xbb\xbf{"a": 1}', {}),  # only one mark is a mark
        (b'{"a": "\xff"}', {}),  # not UTF-8
    ],
)
def test_state_is_read_as_utf8_with_an_optional_byte_order_mark(
    project: Path, raw: bytes, expected: dict[str, object]
) -> None:
    state = project / ".karni" / "local" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_bytes(raw)
    assert read_state(str(project)) == expected


def test_other_state_keys_are_kept(project: Path, capsys) -> None:
    state = project / ".karni" / "local" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text('{"other": 3}')
    doctor(capsys)
    assert json.loads(state.read_text()) == {"other": 3, STATE_KEY: True}


def test_unwritable_state_means_no_tip_ever(project: Path, capsys) -> None:
    (project / ".karni" / "local" / "state.json").mkdir(parents=True)  # cannot be replaced
    assert "tip:" not in doctor(capsys)
    assert "tip:" not in doctor(capsys)
    shutil.rmtree(project / ".karni" / "local")
    (project / ".karni" / "local").write_text("a file where the folder belongs")
    assert "tip:" not in doctor(capsys)


def test_claim_once(tmp_path: Path) -> None:
    assert claim_once(str(tmp_path), "a") is True
    assert claim_once(str(tmp_path), "a") is False
    assert claim_once(str(tmp_path), "b") is True
    assert json.loads((tmp_path / STATE_FILE).read_text()) == {"a": True, "b": True}
    assert not list((tmp_path / ".karni" / "local").glob("*.tmp"))


def test_third_party_means_not_one_of_ours() -> None:
    assert {
        "karni-history-chronicle",
        "karni-history-adr",
        "karni-historian",
    } == OWN_PROVIDER_DISTRIBUTIONS
    assert not is_third_party("karni-history-chronicle")
    assert not is_third_party("Karni_History.ADR")
    assert not is_third_party(None)
    assert is_third_party("my-history")
    assert is_third_party("karni-history-other")


SYNCHRONIZED = """
import os, sys, time
import karni.agent.history, karni.cli.commands.doctor, karni.cli.commands.check
import karni.cli.tip, karni.cli.config.state, karni.cli.config.settings, json, fcntl
from karni.cli.main import main
barrier = sys.argv[1]
open(os.path.join(barrier, f"ready-{os.getpid()}"), "w").close()
deadline = time.monotonic() + 300
while not os.path.exists(os.path.join(barrier, "go")) and time.monotonic() < deadline:
    time.sleep(0.002)  # every process is loaded and waiting: they are released together
sys.exit(main(sys.argv[2:]))
"""


def wait_until(condition, seconds: float = 300) -> None:
    """Poll ``condition``; only a hung machine makes this fail, never a slow one."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the processes did not start"
        time.sleep(0.01)


@pytest.mark.parametrize("synchronized", [False, True])
def test_twenty_concurrent_processes_show_it_at_most_once(
    project: Path, tmp_path: Path, synchronized: bool
) -> None:
    """20 processes (doctor and check) at once: one tip in total, a valid state file.

    The synchronized run releases all 20 only after each has imported everything
    (a file barrier, not a clock), so on a slow or loaded machine they still race
    for the same state file; the other run starts them as fast as it can.
    """
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    commands = [["doctor"], ["check"]] * 10
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", SYNCHRONIZED, str(barrier), *args]
            if synchronized
            else [sys.executable, "-m", "karni.cli", *args],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    try:
        if synchronized:
            wait_until(
                lambda: (
                    len(list(barrier.glob("ready-*"))) == len(processes)
                    or any(process.poll() is not None for process in processes)
                )
            )
            (barrier / "go").touch()
        outputs = [process.communicate(timeout=300) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert [process.returncode for process in processes] == [0] * 20, outputs
    shown = sum(out.count("tip:") + err.count("tip:") for out, err in outputs)
    assert shown == 1
    assert (
        sum(out.endswith(DOCUMENTED_TIP) for out, _ in outputs[::2])
        + sum(err == DOCUMENTED_TIP for _, err in outputs[1::2])
        == 1
    )
    assert json.loads((project / STATE_FILE).read_text()) == {STATE_KEY: True}
    leftovers = [p.name for p in (project / ".karni" / "local").iterdir()]
    assert sorted(leftovers) == [".gitignore", "state.json", "state.lock"]


TIP_FREE_RUNS = {
    "context": [["context"], ["context", "--with-history"], ["context", "--with-history", "x.py"]],
    "rules": [["rules"], ["rules", "--json"], ["rules", "--explain", "K001"]],
    "config": [["config", "list"], ["config", "get", "suggest_tools"]],
    "new": [["new", "{tmp}/fresh"]],
    "hooks": [["hooks", "status"], ["hooks", "status", "--json"]],
    "completion": [["completion", "bash"]],
    "hook": [["hook", "--help"]],  # its runs write .karni/local/ by design (tests: test_hook.py)
    "trust": [["trust", "--list"]],
}
"""Every command except doctor and check, as run in the test below (a new command must be
added here or to TIP_COMMANDS)."""

TIP_COMMANDS = {"doctor", "check"}


def test_every_command_is_either_tip_free_or_a_tip_command() -> None:
    from karni.cli.main import COMMANDS

    assert set(TIP_FREE_RUNS) | TIP_COMMANDS == set(COMMANDS)
    assert not set(TIP_FREE_RUNS) & TIP_COMMANDS


def test_no_other_command_shows_the_tip_or_creates_local_state(
    project: Path, capsys, tmp_path
) -> None:
    for runs in TIP_FREE_RUNS.values():
        for args in runs:
            assert main([arg.replace("{tmp}", str(tmp_path)) for arg in args]) == 0, args
    assert main(["rules", "sync", "--check"]) == 0
    captured = capsys.readouterr()
    assert "tip:" not in captured.out + captured.err
    assert not (project / ".karni").exists()
    assert (tmp_path / "fresh" / "manage.py").is_file()
    assert not (tmp_path / "fresh" / ".karni" / "local").exists()
    assert doctor(capsys).endswith(DOCUMENTED_TIP)  # the tip was still available all along


def test_a_recorded_tip_is_seen_without_parsing_the_state(project: Path, capsys) -> None:
    from karni.cli import tip

    assert not tip._recorded_as_shown(str(project))
    assert claim_once(str(project), STATE_KEY)  # how the tip is recorded when shown
    assert tip._recorded_as_shown(str(project))  # the fast check reads that format
    assert "tip:" not in doctor(capsys)


@pytest.mark.parametrize(
    "state",
    [
        {"earlier": {STATE_KEY: True}},  # the record's text inside another value
        [{STATE_KEY: True}],  # not an object: read as empty, as the locked check does
    ],
)
def test_the_records_text_elsewhere_in_the_state_is_not_the_record(
    project: Path, capsys, state: object
) -> None:
    """The state is parsed: only a top-level ``history_tip_shown`` says the tip was shown."""
    from karni.cli import tip

    path = project / STATE_FILE
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(state, indent=2), encoding="utf-8")
    assert f'"{STATE_KEY}": true' in path.read_text(encoding="utf-8")  # what a byte search finds
    assert not tip._recorded_as_shown(str(project))
    assert doctor(capsys).endswith(DOCUMENTED_TIP)
    assert tip._recorded_as_shown(str(project))
    assert "tip:" not in doctor(capsys)


def test_a_later_duplicate_key_decides_as_json_does(project: Path, capsys) -> None:
    from karni.cli import tip

    path = project / STATE_FILE
    path.parent.mkdir(parents=True)
    path.write_text(f'{{"{STATE_KEY}": true, "{STATE_KEY}": false}}', encoding="utf-8")
    assert not tip._recorded_as_shown(str(project))
    assert doctor(capsys).endswith(DOCUMENTED_TIP)
    path.write_text(f'{{"{STATE_KEY}":true}}', encoding="utf-8")  # compact: still the record
    assert tip._recorded_as_shown(str(project))
    assert "tip:" not in doctor(capsys)


def test_a_state_without_the_record_still_gets_the_tip_once(project: Path, capsys) -> None:
    state = project / STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"other": 1, STATE_KEY: False}), encoding="utf-8")
    assert doctor(capsys).endswith(DOCUMENTED_TIP)
    assert "tip:" not in doctor(capsys)
    assert read_state(str(project)) == {"other": 1, STATE_KEY: True}
