"""Which records concern a file: its path, its module, its directory."""

from __future__ import annotations

import pytest
from karni_history_adr.matching import mention_pattern, normalize_path

PATH = "apps/events/models.py"


@pytest.mark.parametrize(
    "text",
    [
        "Changed apps/events/models.py to soft-delete.",
        "See `apps/events/models.py`.",
        "In ./apps/events/models.py, line 3",
        "apps/events/models.py:12 holds the model",
        "[models](apps/events/models.py)",
        "The module apps.events.models defines it.",
        "`apps.events.models.Event` subclasses SoftDeleteModel.",
        "Everything under apps/events/ is soft-deleted.",
        "The apps/events folder",
        "INSTALLED_APPS gains apps.events.",
    ],
)
def test_mentions(text: str) -> None:
    pattern = mention_pattern(PATH)
    assert pattern is not None and pattern.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "apps/events/viewsets.py only",
        "apps/events/models.pyc is stale",
        "src/apps/events/models.py is another project",
        "apps.events.models_old is gone",
        "apps.events.viewsets only",
        "apps/eventsite/ is another folder",
        "myapps/events/ is another folder",
        "The models.py file",
    ],
)
def test_does_not_mention(text: str) -> None:
    pattern = mention_pattern(PATH)
    assert pattern is not None and not pattern.search(text)


def test_a_top_level_folder_counts_only_with_its_slash() -> None:
    pattern = mention_pattern("config/settings.py")
    assert pattern is not None
    assert pattern.search("everything in config/ is shared")
    assert not pattern.search("we config the app")
    assert pattern.search("config.settings is loaded")  # the module itself
    assert not pattern.search("config.urls is loaded")
    assert pattern.search("config/settings.py")


def test_a_root_file_matches_only_its_name() -> None:
    pattern = mention_pattern("manage.py")
    assert pattern is not None
    assert pattern.search("run manage.py migrate")
    assert not pattern.search("we manage it")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("apps/events/models.py", "apps/events/models.py"),
        ("./apps//events/./models.py", "apps/events/models.py"),
        ("apps/events/", "apps/events"),
        ("", None),
        (".", None),
        ("..", None),
        ("../outside.py", None),
        ("apps/../../outside.py", None),
        ("/etc/passwd", None),
        ("apps\\events\\models.py", None),
        ("apps/\x1b[2J.py", None),
        ("a/" * 600, None),
    ],
)
def test_normalize_path(path: str, expected: str | None) -> None:
    assert normalize_path(path) == expected
