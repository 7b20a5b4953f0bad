"""Declaration kinds, the settings tree, the registry, resolution (project > profile > user)."""

from __future__ import annotations

import pytest
from karni.agent.common.config import ConfigLayer
from karni.agent.common.settings import (
    USER,
    AnyOf,
    Boolean,
    Field,
    Forbidden,
    Integer,
    ListOf,
    Number,
    Setting,
    Table,
    Text,
    ValueTextError,
    toml_literal,
)
from karni.agent.common.settings_registry import declarations
from karni.agent.common.settings_table import SettingsTable, resolve, validate_layers

ENTRY = Table(
    "an entry",
    {
        "model": Field(Text(), "the model"),
        "n": Field(Integer(1, 9), "n"),
        "url": Field(Text(), "where it sends the key", scope=USER),
    },
)

SETTINGS = [
    Setting("flag", Boolean(), "a flag", default=True),
    Setting("tool.level", Number(0.5, 2), "a level", default=1),
    Setting("tool.mode", Text(choices=("a", "b")), "a mode", profile=True),
    Setting("tool.entry", AnyOf(Text(), ENTRY), "an entry", profile=True),
    Setting("tool.names", ListOf(Text()), "names", default=[]),
    Setting("tool.entries", ListOf(AnyOf(Text(), ENTRY)), "entries", default=[]),
    Setting("tool.map.*", AnyOf(Text(), Boolean(only=False)), "a map"),
    Setting("tool.wrong", Forbidden("belongs in [other]"), ""),
    Setting("secret", Text(), "user only", scope=USER),
]


@pytest.fixture
def table() -> SettingsTable:
    return SettingsTable(SETTINGS)


def problems(table: SettingsTable, document: dict, scope: str = "project") -> list[str]:
    return [str(problem) for problem in table.validate(document, "F", scope)]


def test_valid_documents_have_no_problems(table: SettingsTable) -> None:
    document = {
        "flag": False,
        "tool": {
            "level": 2,
            "mode": "b",
            "entry": {"model": "x", "n": 3},
            "names": ["a"],
            "map": {"X": "t", "Y": False},
        },
    }
    assert problems(table, document) == []
    assert problems(table, {"secret": "s", "profiles": {"p": {"tool": {"mode": "a"}}}}, USER) == []


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"flag": 1}, "F: `flag` must be true or false, not 1"),
        ({"nope": 1}, "F: `nope` is not a known setting; known: flag, profiles, secret, tool"),
        ({"tool": 1}, "F: `tool` must be a table; write [tool]"),
        ({"tool": {"level": 3}}, "F: `tool.level` must be a number from 0.5 to 2, not 3"),
        ({"tool": {"level": True}}, "F: `tool.level` must be a number from 0.5 to 2, not true"),
        ({"tool": {"mode": "c"}}, 'F: `tool.mode` must be one of a, b, not "c"'),
        ({"tool": {"entry": 3}}, "F: `tool.entry` must be a string or a table (an entry), not 3"),
        (
            {"tool": {"entry": {"n": 0}}},
            "F: `tool.entry.n` must be a whole number from 1 to 9, not 0",
        ),
        ({"tool": {"entry": {"m": 0}}}, "F: `tool.entry.m` is not a known key; known: model, n"),
        ({"tool": {"names": ["a", 2]}}, "F: `tool.names[2]` must be a string, not 2"),
        ({"tool": {"map": {"X": True}}}, "F: `tool.map.X` must be a string or false, not true"),
        ({"tool": {"wrong": 1}}, "F: `tool.wrong` belongs in [other]"),
        ({"secret": "s"}, "F: `secret` can be set only in your user configuration"),
        ({"profiles": {}}, "F: `profiles` can be set only in your user configuration"),
    ],
)
def test_each_problem_names_the_file_and_the_key(table, document, expected) -> None:
    [found] = problems(table, document)
    assert found.startswith(expected)


def test_every_problem_is_reported_not_just_the_first(table: SettingsTable) -> None:
    assert len(problems(table, {"flag": 1, "tool": {"level": 9, "mode": "z"}, "x": 1})) == 4


def test_find_matches_wildcards_and_profiles(table: SettingsTable) -> None:
    assert table.find("tool.map.anything").name == "tool.map.*"
    assert table.find("profiles.work.tool.mode").scope == USER
    assert table.find("profiles.work.tool.level") is None  # not profile-able
    assert table.is_table("tool") and not table.is_table("tool.level")
    assert table.known_under("tool") == ["entries", "entry", "level", "map", "mode", "names"]


def test_resolution_is_project_then_profile_then_user_then_default(table) -> None:
    user = ConfigLayer(
        "user", "U", {"tool": {"mode": "a", "level": 2}, "profiles": {"p": {"tool": {"mode": "b"}}}}
    )
    project = ConfigLayer("project", "P", {})
    assert resolve(table, [project, user], "tool.mode").source == "user"
    project.data["profile"] = "p"
    found = resolve(table, [project, user], "tool.mode")
    assert (found.value, found.source, found.path) == ("b", "profile p", "U")
    assert resolve(table, [project, user], "tool.level").value == 2  # not from profiles
    project.data["tool"] = {"mode": "a"}
    assert resolve(table, [project, user], "tool.mode").source == "project"
    found = resolve(table, [project, user], "flag")
    assert (found.value, found.source, found.path) == (True, "default", None)


def test_a_user_only_setting_is_never_taken_from_the_project_file(table) -> None:
    project = ConfigLayer("project", "P", {"secret": "from a cloned repository"})
    user = ConfigLayer("user", "U", {"secret": "mine"})
    found = resolve(table, [project, user], "secret")
    assert (found.value, found.source, found.path) == ("mine", "user", "U")
    found = resolve(table, [project, ConfigLayer("user", "U", {})], "secret")
    assert (found.value, found.source, found.path) == (None, "default", None)


def test_a_user_only_field_inside_a_table_is_an_error_in_the_project_file(table) -> None:
    document = {
        "tool": {
            "entry": {"model": "m", "url": "http://attacker.example"},
            "entries": ["m", {"model": "m"}, {"url": "http://x", "n": 3}],
        }
    }
    refused = "can be set only in your user configuration"
    found = table.validate(document, "P", "project")
    assert [(p.key, refused in p.message) for p in found] == [
        ("tool.entry.url", True),
        ("tool.entries[3].url", True),
    ]
    assert table.validate(document, "U", "user") == []
    assert table.validate({"tool": {"entry": "m", "entries": [{"n": 2}]}}, "P", "project") == []
    with pytest.raises(ValueError, match="scope"):
        Field(Text(), "x", scope="project")


def test_a_selected_profile_must_exist_in_the_user_file(table) -> None:
    layers = [ConfigLayer("project", "P", {"profile": "gone"}), ConfigLayer("user", "U", {})]
    full = SettingsTable([*SETTINGS, Setting("profile", Text(), "the profile")])
    assert [str(p) for p in validate_layers(full, layers)] == [
        "P: `profile` = 'gone' but U defines no [profiles.gone]; add it there or remove `profile`"
    ]


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (Boolean(), "Yes", True),
        (Boolean(), "0", False),
        (Integer(1, 10**9), "200,000", 200_000),
        (Number(0, 1), "0.5", 0.5),
        (ListOf(Text()), "a, b", ["a", "b"]),
        (ListOf(Text()), '["a", "b"]', ["a", "b"]),
        (AnyOf(Text(), ENTRY), "{model = 'x'}", {"model": "x"}),
        (AnyOf(Text(), Boolean(only=False)), "false", False),
        (AnyOf(Text(), Boolean(only=False)), "${x}", "${x}"),
    ],
)
def test_command_line_text_becomes_a_value(kind, text: str, value: object) -> None:
    assert kind.parse(text) == value


@pytest.mark.parametrize(
    ("kind", "text"), [(Boolean(), "maybe"), (Integer(1, 2), "x"), (Forbidden("no"), "1")]
)
def test_text_that_is_no_value_of_the_kind(kind, text: str) -> None:
    with pytest.raises(ValueTextError):
        kind.parse(text)


def test_toml_literal() -> None:
    assert toml_literal({"a": [1, 'x"y'], "b": False}) == '{a = [1, "x\\"y"], b = false}'


def test_the_registry_reports_broken_and_duplicate_declarations(site) -> None:
    site.module(
        "good_settings",
        "from karni.agent.common.settings import Boolean, Setting\n"
        "SETTINGS = [Setting('good.flag', Boolean(), 'a flag', default=False)]\n",
    )
    site.module(
        "dupe_settings",
        "from karni.agent.common.settings import Boolean, Setting\n"
        "def settings():\n    return [Setting('good.flag', Boolean(), 'again')]\n",
    )
    site.module("bad_settings", "raise RuntimeError('boom')\n")
    site.distribution("good-pkg", "1", {"karni.settings": {"good": "good_settings:SETTINGS"}})
    site.distribution("other-pkg", "1", {"karni.settings": {"x": "dupe_settings:settings"}})
    site.distribution("bad-pkg", "1", {"karni.settings": {"bad": "bad_settings:SETTINGS"}})
    found = declarations()
    by_name = {setting.name: setting for setting in found.settings}
    assert by_name["good.flag"].owner == "good-pkg" and by_name["good.flag"].doc == "a flag"
    assert by_name["safe_directories"].owner == "karni-core"
    assert found.failures[0].startswith(
        "the settings of bad-pkg (`bad_settings:SETTINGS`) could not be read: RuntimeError: boom"
    )
    assert found.failures[1] == (
        "setting `good.flag` is declared by both good-pkg and other-pkg; other-pkg's "
        "declaration is ignored: uninstall one of them"
    )


def test_the_how_to_sample_declares_working_settings() -> None:
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "write-a-provider.md"
    [sample] = re.findall(
        r"^```py\n# my_history/settings.py\n(.*?)^```$", page.read_text(), re.M | re.S
    )
    namespace: dict[str, object] = {}
    exec(sample, namespace)  # the page's own sample, run as a provider would ship it
    table = SettingsTable(namespace["SETTINGS"])
    assert problems(table, {"my_history": {"enabled": False, "limit": 5}}) == []
    [found] = problems(table, {"my_history": {"limit": 99}})
    assert found == "F: `my_history.limit` must be a whole number from 1 to 50, not 99"
    mirror = {"my_history": {"mirror": {"name": "team", "url": "https://mirror.example"}}}
    [found] = problems(table, mirror)
    assert found.startswith("F: `my_history.mirror.url` can be set only in your user")
    assert problems(table, mirror, scope="user") == []


def test_an_absent_packages_table_is_told_by_the_problem_not_its_wording() -> None:
    from karni.agent.common.settings import Boolean, Setting
    from karni.agent.common.settings_registry import absent_package
    from karni.agent.common.settings_table import Problem, SettingsTable

    table = SettingsTable([Setting("suggest_tools", Boolean(), "Show tips.", default=True)])
    problems = table.validate({"historian": {"x": 1}, "colour": 1}, "F", "project")
    assert [(p.key, p.unknown) for p in problems] == [("historian", True), ("colour", True)]
    assert [absent_package(p) for p in problems] == ["karni-historian", None]
    reworded = Problem("F", "historian", "is declared by no installed package", unknown=True)
    assert absent_package(reworded) == "karni-historian"
    worded_alike = Problem("F", "historian", "is not a known setting; known: x")  # not unknown
    assert absent_package(worded_alike) is None
    inner = Problem("F", "historian.colour", "is not a known setting; known: x", unknown=True)
    assert absent_package(inner) is None  # the table is declared: only the key is wrong
