"""Agent adapters: their content, `karni rules sync [--check] [--force]`, and `find_stale`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from karni.cli.main import main
from karni.cli.rules.adapters import find_stale, is_generated, planned_files
from karni.cli.rules.agents import ADAPTERS, GENERATED_MARKER
from karni.cli.rules.model import RulesFileError
from karni.cli.rules.registry import KARNI_RULES
from karni.cli.scaffold import create_project

K008_LINE = "K008 Before editing a file: karni context --with-history FILE."
DEFAULT_PATHS = [adapter.path for adapter in ADAPTERS]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project made by `karni new`'s scaffold, as the working directory."""
    path, _ = create_project(str(tmp_path / "shop"))
    monkeypatch.chdir(path)
    return Path(path)


def karni(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot_tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


# -- content ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [adapter.name for adapter in ADAPTERS])
def test_adapter_content(name: str, snapshot_text) -> None:
    (file,) = [file for file in planned_files() if file.name == name]
    assert file.content == snapshot_text


def test_every_adapter_is_marked_and_has_the_front_matter_its_tool_expects() -> None:
    files = {file.path: file.content for file in planned_files()}
    assert list(files) == DEFAULT_PATHS
    for path, content in files.items():
        assert is_generated(content), path
        assert content.endswith("\n") and "\r" not in content
        if path.endswith((".mdc", ".windsurf/rules/karni.md")):
            assert content.startswith("---\n")
            front_matter = content.split("---\n")[1]
            for line in front_matter.splitlines():
                key, _, value = line.partition(":")
                assert key.isidentifier() and ": " not in value, line  # plain YAML scalars
            assert content.split("---\n")[2].splitlines()[0] == GENERATED_MARKER
        else:
            assert content.splitlines()[0] == GENERATED_MARKER
    assert "\nalwaysApply: true\n" in files[".cursor/rules/karni.mdc"]
    assert "\ntrigger: always_on\n" in files[".windsurf/rules/karni.md"]
    assert files["CLAUDE.md"] == f"{GENERATED_MARKER}\n@AGENTS.md\n"


def test_adapters_hold_no_rule_text() -> None:
    for file in planned_files():
        assert "K0" not in file.content, file.path
        for rule in KARNI_RULES:
            assert rule.summary not in file.content
            assert rule.rule not in file.content
        if file.name != "claude":
            assert "`karni context`" in file.content and "`karni rules`" in file.content


@pytest.mark.parametrize(
    ("text", "generated"),
    [
        (f"{GENERATED_MARKER}\nbody\n", True),
        (f"---\ntrigger: always_on\n---\n{GENERATED_MARKER}\n", True),
        (f"\ufeff{GENERATED_MARKER}\n", True),
        (f"# My notes\n{GENERATED_MARKER}\n", False),
        (f"---\nunclosed\n{GENERATED_MARKER}\n", False),
        ("", False),
    ],
)
def test_is_generated(text: str, generated: bool) -> None:
    assert is_generated(text) is generated


# -- sync, --check and --force on a scaffolded project ----------------------------------------


def test_a_new_project_is_fresh(project: Path, capsys) -> None:
    assert find_stale(project) == []
    assert karni(capsys, "rules", "sync", "--check") == (0, "adapters are up to date\n", "")
    before = snapshot_tree(project)
    assert karni(capsys, "rules", "sync") == (0, "adapters are up to date\n", "")
    assert snapshot_tree(project) == before


def test_check_lists_every_stale_file_and_writes_nothing(
    project: Path, capsys, snapshot_text
) -> None:
    (project / "AGENTS.md").write_text((project / "AGENTS.md").read_text() + "extra\n")
    (project / "CLAUDE.md").unlink()
    (project / "CONVENTIONS.md").write_text("# Our conventions, by hand\n")
    (project / ".windsurf/rules/karni.md").unlink()
    (project / ".windsurf/rules/karni.md").mkdir()
    before = snapshot_tree(project)
    code, out, err = karni(capsys, "rules", "sync", "--check")
    assert (code, out) == (1, "")
    assert err == snapshot_text
    assert snapshot_tree(project) == before
    assert find_stale(project) == [
        "AGENTS.md",
        "CLAUDE.md",
        ".windsurf/rules/karni.md",
        "CONVENTIONS.md",
    ]


def test_sync_rewrites_stale_files_and_leaves_hand_written_ones(
    project: Path, capsys, snapshot_text
) -> None:
    generated = snapshot_tree(project)
    (project / "AGENTS.md").write_text((project / "AGENTS.md").read_text() + "extra\n")
    (project / ".clinerules/karni.md").unlink()
    (project / "CONVENTIONS.md").write_bytes(b"# By hand\r\nkeep me \xff\n")
    code, out, err = karni(capsys, "rules", "sync")
    assert code == 1
    assert out + "--- stderr ---\n" + err == snapshot_text
    assert (project / "AGENTS.md").read_bytes() == generated["AGENTS.md"]
    assert (project / ".clinerules/karni.md").read_bytes() == generated[".clinerules/karni.md"]
    assert (project / "CONVENTIONS.md").read_bytes() == b"# By hand\r\nkeep me \xff\n"
    assert not (project / ".karni/backup").exists()
    assert find_stale(project) == ["CONVENTIONS.md"]


def test_force_backs_up_hand_written_files_first(project: Path, capsys, snapshot_text) -> None:
    generated = snapshot_tree(project)
    (project / "CONVENTIONS.md").write_bytes(b"# By hand\r\nkeep me \xff\n")
    (project / ".github/copilot-instructions.md").write_text("Copilot, be nice.\n")
    code, out, err = karni(capsys, "rules", "sync", "--force")
    assert (code, err) == (0, "")
    assert out == snapshot_text
    assert (project / ".karni/backup/CONVENTIONS.md").read_bytes() == b"# By hand\r\nkeep me \xff\n"
    assert (project / ".karni/backup/.github/copilot-instructions.md").read_text() == (
        "Copilot, be nice.\n"
    )
    assert snapshot_tree(project) == {
        **generated,
        ".karni/backup/CONVENTIONS.md": b"# By hand\r\nkeep me \xff\n",
        ".karni/backup/.github/copilot-instructions.md": b"Copilot, be nice.\n",
    }
    assert find_stale(project) == []

    (project / "CONVENTIONS.md").write_text("second hand-written version\n")
    assert karni(capsys, "rules", "sync", "--force")[0] == 0
    assert (
        project / ".karni/backup/CONVENTIONS.md.1"
    ).read_text() == "second hand-written version\n"
    assert (project / ".karni/backup/CONVENTIONS.md").read_bytes() == b"# By hand\r\nkeep me \xff\n"


def test_force_cannot_replace_a_folder(project: Path, capsys) -> None:
    (project / "CLAUDE.md").unlink()
    (project / "CLAUDE.md").mkdir()
    code, out, err = karni(capsys, "rules", "sync", "--force")
    assert (code, out) == (1, "")
    assert err == (
        "karni: CLAUDE.md is not a file, left alone; move it away and run `karni rules sync`\n"
    )


@pytest.mark.parametrize("link", [".karni/backup", ".karni/backup/.github"])
def test_force_refuses_a_linked_backup_folder_before_writing_anything(
    project: Path, capsys, tmp_path: Path, link: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "CONVENTIONS.md").write_text("by hand\n")
    (project / ".github/copilot-instructions.md").write_text("by hand too\n")
    (project / "AGENTS.md").unlink()  # missing: sync would create it
    (project / link).parent.mkdir(parents=True, exist_ok=True)
    (project / link).symlink_to(outside)
    before = snapshot_tree(project)
    code, out, err = karni(capsys, "rules", "sync", "--force")
    assert (code, out) == (1, "")
    assert err.startswith("karni: cannot write the agent adapters: ") and err.count("\n") == 1
    assert "is a symlink" in err and "nothing was written" in err
    assert snapshot_tree(project) == before
    assert list(outside.iterdir()) == []


def test_check_and_force_together_is_a_usage_error(project: Path, capsys) -> None:
    code, out, err = karni(capsys, "rules", "sync", "--check", "--force")
    assert (code, out) == (2, "")
    assert err == "karni: use either `--check` (write nothing) or `--force`, not both\n"
    assert karni(capsys, "rules", "sync", "--dry-run")[0] == 2


# -- ADAPTERS in karni.rules.py ---------------------------------------------------------------


def test_switching_adapters_off_removes_their_generated_files(project: Path, capsys) -> None:
    (project / "karni.rules.py").write_text('ADAPTERS = {"aider": False, "cursor": False}\n')
    assert find_stale(project) == [".cursor/rules/karni.mdc", "CONVENTIONS.md"]
    assert karni(capsys, "rules", "sync", "--check")[0] == 1
    code, out, err = karni(capsys, "rules", "sync")
    assert (code, err) == (0, "")
    assert out == "removed .cursor/rules/karni.mdc\nremoved CONVENTIONS.md\n"
    assert not (project / "CONVENTIONS.md").exists()
    assert not (project / ".cursor").exists()  # emptied folders go too
    assert find_stale(project) == []


def test_a_hand_written_file_where_a_switched_off_adapter_was_is_not_ours(
    project: Path, capsys
) -> None:
    (project / "karni.rules.py").write_text('ADAPTERS = {"aider": False}\n')
    (project / "CONVENTIONS.md").write_text("# Ours, by hand\n")
    assert find_stale(project) == []
    assert karni(capsys, "rules", "sync") == (0, "adapters are up to date\n", "")
    assert (project / "CONVENTIONS.md").read_text() == "# Ours, by hand\n"


def test_moving_adapters(project: Path, capsys) -> None:
    (project / "karni.rules.py").write_text(
        'ADAPTERS = {"agents": "docs/AGENTS.md", "claude": ".claude/CLAUDE.md"}\n'
    )
    assert find_stale(project) == ["docs/AGENTS.md", ".claude/CLAUDE.md", "AGENTS.md", "CLAUDE.md"]
    code, out, err = karni(capsys, "rules", "sync")
    assert (code, err) == (0, "")
    assert out == (
        "created docs/AGENTS.md\ncreated .claude/CLAUDE.md\nremoved AGENTS.md\nremoved CLAUDE.md\n"
    )
    assert (
        project / ".claude/CLAUDE.md"
    ).read_text() == f"{GENERATED_MARKER}\n@../docs/AGENTS.md\n"
    assert (project / "docs/AGENTS.md").read_text().startswith(GENERATED_MARKER + "\n# Working")
    assert find_stale(project) == []


def test_claude_stands_alone_when_agents_is_off(project: Path) -> None:
    (project / "karni.rules.py").write_text('ADAPTERS = {"agents": False}\n')
    files = {file.path: file.content for file in planned_files(_load(project))}
    assert "AGENTS.md" not in files
    assert "@AGENTS.md" not in files["CLAUDE.md"]
    assert "`karni rules`" in files["CLAUDE.md"]


def _load(project: Path):
    from karni.cli.rules.file import load_rules_file

    return load_rules_file(project)


def test_find_stale_raises_for_a_broken_rules_file(project: Path) -> None:
    (project / "karni.rules.py").write_text("ADAPTERS = {'vscode': True}\n")
    with pytest.raises(RulesFileError, match=r"^karni\.rules\.py:1: ADAPTERS names unknown"):
        find_stale(project)


# -- a history store never changes the adapters -----------------------------------------------


@pytest.mark.parametrize("store", ["installed-provider", "conditions-variable", "chronicle"])
def test_adapters_are_byte_identical_with_and_without_a_store(
    project: Path, capsys, monkeypatch, request: pytest.FixtureRequest, store: str
) -> None:
    without = snapshot_tree(project)
    listing_without = karni(capsys, "rules")[1]
    assert K008_LINE not in listing_without

    if store == "installed-provider":
        request.getfixturevalue("store_provider")
        (project / ".my-history").mkdir()
    elif store == "conditions-variable":
        monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "history")
    else:
        from karni.agent.history import discover

        monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
        if not any(found.name == "gigai-chronicle" for found in discover().providers):
            pytest.skip("the built-in Chronicle provider does not load here")
        (project / ".chronicle").mkdir()

    assert K008_LINE in karni(capsys, "rules")[1]  # the store is really seen
    assert karni(capsys, "rules", "sync", "--check") == (0, "adapters are up to date\n", "")
    assert karni(capsys, "rules", "sync") == (0, "adapters are up to date\n", "")
    with_store = {
        path: data
        for path, data in snapshot_tree(project).items()
        if not path.startswith((".my-history", ".chronicle"))
    }
    assert with_store == without


def test_sync_check_end_to_end_with_and_without_a_store(
    project: Path, store_provider: Path
) -> None:
    env = dict(os.environ)  # store_provider put its site on PYTHONPATH

    def check() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "karni.cli", "rules", "sync", "--check"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    before = check()
    (project / ".my-history").mkdir()
    rules = subprocess.run(
        [sys.executable, "-m", "karni.cli", "rules"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert K008_LINE in rules.stdout
    after = check()
    assert (before.returncode, before.stdout, before.stderr) == (0, "adapters are up to date\n", "")
    assert (after.returncode, after.stdout, after.stderr) == (
        before.returncode,
        before.stdout,
        before.stderr,
    )
    (project / "AGENTS.md").unlink()
    stale = check()
    assert (stale.returncode, stale.stdout) == (1, "")
    assert stale.stderr == (
        "karni: AGENTS.md: missing\nkarni: 1 adapter file stale; run `karni rules sync`\n"
    )


def test_a_symlinked_folder_is_never_written_through(project: Path, tmp_path: Path, capsys) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(project / ".cursor")
    (project / ".cursor").symlink_to(outside, target_is_directory=True)
    code, _, err = karni(capsys, "rules", "sync")
    assert code == 1
    assert "karni: .cursor/rules/karni.mdc is reached through a symlink" in err
    assert list(outside.iterdir()) == []  # nothing was written where the link points
    (project / "AGENTS.md").unlink()
    assert karni(capsys, "rules", "sync")[0] == 1
    assert (project / "AGENTS.md").is_file()  # the other adapters are still written
    assert ".cursor/rules/karni.mdc" in find_stale(project)


def test_a_symlinked_adapter_file_is_left_alone(project: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text("someone else's file\n")
    (project / "CONVENTIONS.md").unlink()
    (project / "CONVENTIONS.md").symlink_to(target)
    code, _, err = karni(capsys, "rules", "sync", "--force")
    assert code == 1
    assert "CONVENTIONS.md is reached through a symlink" in err
    assert target.read_text() == "someone else's file\n"
    assert (project / "CONVENTIONS.md").is_symlink()
