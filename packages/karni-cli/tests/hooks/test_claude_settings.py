"""Merging into and out of Claude Code's settings: only Karni's entries ever change."""

from __future__ import annotations

import pytest
from karni.cli.hooks.claude_settings import (
    SettingsError,
    add_hooks,
    dump,
    installed_events,
    load,
    remove_hooks,
)


def test_a_karni_hook_inside_someone_elses_group_leaves_the_group():
    theirs = {"type": "command", "command": "./lint.sh"}
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Edit",
                    "hooks": [theirs, {"type": "command", "command": "karni hook claude-code X"}],
                }
            ]
        }
    }
    assert remove_hooks(settings) == {
        "hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [theirs]}]}
    }


def test_empty_containers_that_were_there_stay():
    settings = {"hooks": {"Notification": []}, "env": {}}
    assert remove_hooks(add_hooks(settings, "context")) == settings
    assert remove_hooks({}) == {}


def test_commands_that_only_look_alike_are_not_karnis():
    settings = {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "echo karni hook claude-code Stop"}]},
                {"hooks": [{"type": "prompt", "command": "karni hook claude-code Stop"}]},
            ]
        }
    }
    assert remove_hooks(settings) == settings
    assert installed_events(settings) == {}


def test_install_twice_is_install_once_and_modes_replace_each_other():
    once = add_hooks({}, "context")
    assert add_hooks(once, "context") == once
    blocking = add_hooks(once, "block-first")
    assert installed_events(blocking)["PreToolUse"] == (
        "karni hook claude-code PreToolUse --before-edit block-first"
    )
    assert len(blocking["hooks"]["PreToolUse"]) == 1


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        ('{\n    "a": 1\n}\n', '{\n    "a": 1,\n    "b": "é"\n}\n'),
        ('{\n\t"a": 1\n}', '{\n\t"a": 1,\n\t"b": "é"\n}'),
        ("", '{\n  "a": 1,\n  "b": "é"\n}\n'),
    ],
)
def test_the_layout_of_the_file_is_kept(original, expected):
    assert dump({"a": 1, "b": "é"}, original) == expected


@pytest.mark.parametrize("text", ["nope", "[1]", '{"hooks": 3}', '{"hooks": {"Stop": "x"}}'])
def test_load_refuses_what_is_not_claude_code_settings(text):
    with pytest.raises(SettingsError):
        load(text)
