"""Every "no brief" case of docs/chronicle-contract.md, silently; and stderr that is not one."""

from __future__ import annotations

import json

import pytest
from karni.agent.history import compose
from karni.agent.history_chronicle import ChronicleProvider
from karni.agent.history_chronicle.envelope import parse_envelope

FILE = "src/session/store.ts"
ARGV = ["context", FILE, "--json", "--limit", "5"]


def _reply(fake_chronicle, example) -> dict:
    result = fake_chronicle.run(*ARGV, cwd=example.root)
    fake_chronicle.reset()
    return json.loads(result.stdout.decode("utf-8"))


def _assert_silent(example, fake_chronicle, *, runs: int = 2) -> None:
    provider = ChronicleProvider()
    assert provider.context(example.root, FILE) is None
    assert compose(example.root, FILE, providers=[provider]) is None
    assert [call.argv for call in fake_chronicle.calls()] == [ARGV] * runs


def test_no_chronicle_on_path(example, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    provider = ChronicleProvider()
    assert provider.detect(example.root) is True
    assert provider.context(example.root, FILE) is None
    assert provider.project_context(example.root) is None
    assert compose(example.root, FILE, providers=[provider]) is None


def test_a_missing_explicit_executable(example, tmp_path):
    provider = ChronicleProvider(str(tmp_path / "no" / "chronicle"))
    assert provider.context(example.root, FILE) is None


def test_exit_3_not_a_chronicle_project(example, fake_chronicle):
    # Exit 3 with a perfectly good reply on stdout: the exit status decides.
    fake_chronicle.configure(exit_code=3)
    _assert_silent(example, fake_chronicle)


def test_exit_3_for_real_when_the_store_vanished(example, fake_chronicle, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    provider = ChronicleProvider()
    assert provider.context(outside, "a.py") is None  # no store: not even run
    assert fake_chronicle.calls() == []
    result = fake_chronicle.run(*ARGV, cwd=outside)
    assert (result.returncode, result.stdout) == (3, b"")


@pytest.mark.parametrize("code", [1, 2, 4, 127, 255])
def test_any_other_non_zero_exit(example, fake_chronicle, code):
    fake_chronicle.configure(exit_code=code, stderr="something went wrong\n")
    _assert_silent(example, fake_chronicle)


def test_killed_by_a_signal(example, fake_chronicle, tmp_path):
    script = fake_chronicle.bin_dir / "chronicle"
    script.write_text("#!/bin/sh\nkill -9 $$\n")
    provider = ChronicleProvider()
    assert provider.context(example.root, FILE) is None


@pytest.mark.parametrize(
    "stdout",
    [
        "",
        "\n",
        "not json at all\n",
        "# Context for src/session/store.ts\n\n_Assembled…_\n",
        "[1, 2, 3]\n",
        '"apiVersion"\n',
        "null\n",
        '{"apiVersion":1,"command":"context"\n',
    ],
)
def test_output_that_is_not_json(example, fake_chronicle, stdout):
    fake_chronicle.configure(stdout=stdout)
    _assert_silent(example, fake_chronicle)


@pytest.mark.parametrize("version", [2, 0, "1", 1.0, True, None])
def test_a_wrong_api_version(example, fake_chronicle, version):
    reply = _reply(fake_chronicle, example)
    reply["apiVersion"] = version
    fake_chronicle.configure(stdout=json.dumps(reply, ensure_ascii=False) + "\n")
    _assert_silent(example, fake_chronicle)


def test_a_missing_api_version(example, fake_chronicle):
    reply = _reply(fake_chronicle, example)
    del reply["apiVersion"]
    fake_chronicle.configure(stdout=json.dumps(reply) + "\n")
    _assert_silent(example, fake_chronicle)


@pytest.mark.parametrize("command", ["knowledge", "why", None, ""])
def test_the_reply_to_another_command(example, fake_chronicle, command):
    reply = _reply(fake_chronicle, example)
    reply["command"] = command
    fake_chronicle.configure(stdout=json.dumps(reply) + "\n")
    _assert_silent(example, fake_chronicle)


def test_the_knowledge_reply_is_not_taken_for_context(example, fake_chronicle):
    knowledge = fake_chronicle.run("knowledge", "--json", cwd=example.root).stdout
    fake_chronicle.reset()
    fake_chronicle.configure(stdout=knowledge.decode("utf-8"))
    _assert_silent(example, fake_chronicle)


def test_a_context_reply_is_not_taken_for_knowledge(example, fake_chronicle):
    reply = fake_chronicle.run(*ARGV, cwd=example.root).stdout.decode("utf-8")
    fake_chronicle.reset()
    fake_chronicle.configure(stdout=reply)
    assert ChronicleProvider().project_context(example.root) is None


def test_empty_true_is_silence_even_with_markdown(example, fake_chronicle):
    fake_chronicle.configure(patch={"context": {"empty": True}})
    _assert_silent(example, fake_chronicle)


def test_a_reply_with_nothing_to_show(example, fake_chronicle):
    fake_chronicle.configure(
        patch={"context": {"markdown": "# Context for x\n\n---\n_footer_\n", "prompts": []}},
        drop={"context": ["knowledge"]},
    )
    _assert_silent(example, fake_chronicle)


def test_invalid_utf8_and_deep_nesting_are_not_chronicle():
    assert parse_envelope(b'{"apiVersion":1,"command":"context","x":"\xff"}', "context") is None
    assert parse_envelope(b"[" * 100_000 + b"]" * 100_000, "context") is None
    assert parse_envelope(b'{"apiVersion":1,"command":"context"}', "context") == {
        "apiVersion": 1,
        "command": "context",
    }


def test_stderr_warnings_with_exit_0_still_give_the_brief(example, fake_chronicle):
    fake_chronicle.configure(
        stderr=(
            "⚠ E_FOREIGN_REPO: this .chronicle store's project id was recorded against a "
            "different root history — histories are NOT merged silently (see `chronicle doctor`)\n"
        )
    )
    quiet = ChronicleProvider().context(example.root, FILE)
    assert quiet is not None
    assert quiet.startswith("## Why this file looks the way it does (Project Memory)\n")


def test_a_moved_workspace_warns_on_stderr_and_still_briefs(example, fake_chronicle, tmp_path):
    first = ChronicleProvider().context(example.root, FILE)
    moved = tmp_path / "moved"
    example.root.rename(moved)
    result = fake_chronicle.run(*ARGV, cwd=moved)
    assert result.returncode == 0
    assert result.stderr.decode("utf-8") == f"note: workspace moved ({example.root} → {moved})\n"
    assert ChronicleProvider().context(moved, FILE) == first


def test_stderr_is_discarded_not_leaked(example, fake_chronicle, capfd):
    fake_chronicle.configure(stderr="LOUD WARNING\n", exit_code=1)
    assert ChronicleProvider().context(example.root, FILE) is None
    fake_chronicle.configure(exit_code=None)
    assert ChronicleProvider().context(example.root, FILE) is not None
    captured = capfd.readouterr()
    assert "LOUD WARNING" not in captured.out + captured.err
