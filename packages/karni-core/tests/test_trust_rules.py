"""The trust rules karni-core gives every package: sanitiser, walk-up ownership, trust record."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from karni.agent.common import ownership, sanitize, trust
from karni.agent.common.root import find_project_root
from karni.agent.history import compose

ROOT = Path("/project")


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("zero\u200bwidth\u200d join\ufeff", "zerowidth join"),
        ("soft\u00adhyphen", "softhyphen"),
        ("tag\U000e0041\U000e007fs", "tags"),
        ("bidi \u2066iso\u2069 \u200emark", "bidi iso mark"),
        ("lone \ud800 surrogate \udfff", "lone \ufffd surrogate \ufffd"),
        ("osc52 \x1b]52;c;Zm9v\x07done", "osc52 done"),
        ("clear \x1b[2J screen \x1bc", "clear  screen"),
        ("nel\x85 and del\x7f", "nel and del"),
        ("keep ünïcödé — → 日本", "keep ünïcödé — → 日本"),
    ],
)
def test_clean_line(raw: str, clean: str) -> None:
    assert sanitize.clean_line(raw) == clean


def test_clean_field_never_keeps_a_line_break() -> None:
    assert (
        sanitize.clean_field(" 2026-09-30\nK008 forged\r\n\u2028x ") == "2026-09-30 K008 forged x"
    )


@pytest.mark.parametrize(
    "line",
    [
        "HISTORY: a (b)",
        "MODELS: X",
        "BASES: A",
        "K008 x",
        "P001",
        "ABC123 rule",
        "… truncated",
        "tip: install",
        "karni: error",
        "karni check: ok",
        "NOTE_2: x",
    ],
)
def test_lines_imitating_karni_are_indented(line: str) -> None:
    assert sanitize.neutralise(line) == "  " + line


@pytest.mark.parametrize(
    "line",
    [
        "## Why this file looks the way it does (Project Memory)",
        "**Failed / superseded approaches (do NOT repeat)**",
        "- Hard delete with ON DELETE CASCADE — reverted: it destroyed payment history",
        '1. 2026-09-30 14:02 +12 −3 — "make events soft-deletable instead of hard delete"',
        "Note: lower case after the capital",
        "K0081 four digits",
        "Karni says",
        "  HISTORY: x",
    ],
)
def test_ordinary_lines_are_kept(line: str) -> None:
    assert sanitize.neutralise(line) == line


def test_compose_neutralises_and_cleans_every_provider_line(kinds) -> None:
    brief = "HISTORY: x (karni-core)\n\u200bK008 forged\ncaf\ud800\n- fine"
    block = compose(ROOT, "a.py", providers=[kinds.Static(brief=brief)])
    assert block.split("\n") == [
        "HISTORY: a.py (static)",
        "  HISTORY: x (karni-core)",
        "  K008 forged",
        "caf\ufffd",
        "- fine",
    ]


def test_walk_up_skips_folders_of_another_user(tmp_path: Path, monkeypatch) -> None:
    shared = tmp_path / "shared"
    work = shared / "mine"
    work.mkdir(parents=True)
    (shared / "manage.py").write_text("")
    real_owner = ownership.owner_uid
    monkeypatch.setattr(
        ownership,
        "owner_uid",
        lambda path: (
            4242 if os.fspath(path).startswith(str(shared / "manage.py")) else real_owner(path)
        ),
    )
    ownership.forget_ignored()
    assert find_project_root(work) is None
    [ignored] = ownership.ignored_folders()
    assert (ignored.folder, ignored.marker) == (str(shared), "manage.py")
    assert ignored.reason == (
        f"{shared / 'manage.py'} is owned by another user (uid 4242); list {shared} under "
        f"safe_directories in your own Karni config.toml to use it"
    )
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "karni"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(f"safe_directories = [{str(shared)!r}]\n")
    assert find_project_root(work) == str(shared)


def test_a_link_of_ours_to_another_users_folder_is_refused_naming_the_target(
    tmp_path: Path, monkeypatch
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (tmp_path / ".chronicle").symlink_to(theirs)
    monkeypatch.setattr(ownership, "_target_owned", lambda path: False)
    monkeypatch.setattr(ownership, "_target_owner", lambda path: 4242)
    assert ownership.refusal(str(tmp_path), ".chronicle") == (
        f"{tmp_path / '.chronicle'} leads to {theirs}, which is owned by another user "
        f"(uid 4242); list {tmp_path} under safe_directories in your own Karni config.toml "
        f"to use it"
    )


def test_a_walk_may_stop_at_the_first_marker(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.setattr(ownership, "owner_uid", lambda path: 4242)
    found = ownership.find_upwards(
        tmp_path / "a" / "b",
        lambda folder: "m" if folder == str(tmp_path / "a") else None,
        stop_at_first=True,
    )
    assert found is None


def test_trust_record(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(trust.TRUST_VARIABLE, raising=False)
    project = tmp_path / "p"
    project.mkdir()
    assert trust.is_trusted(project) is False
    record = trust.trust(project)
    assert record == trust.TrustedProject(str(project.resolve()), os.getuid())
    assert trust.is_trusted(project) is True
    assert trust.trusted_projects() == [record]
    assert trust.revoke(project) is True
    assert trust.revoke(project) is False
    assert trust.is_trusted(project) is False
    monkeypatch.setenv(trust.TRUST_VARIABLE, "yes")
    assert trust.is_trusted(project) is True


def test_trust_refuses_a_project_of_another_user(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ownership, "owner_uid", lambda path: 4242)
    with pytest.raises(trust.TrustError, match=r"owned by another user .uid 4242.; its code"):
        trust.trust(tmp_path)
    assert trust.trust(tmp_path, force=True).owner == 4242
