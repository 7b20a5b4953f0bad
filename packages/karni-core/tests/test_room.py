"""The room protocol: a provider with ``accepts_room`` learns how much of the cap it has."""

from __future__ import annotations

from pathlib import Path

import pytest
from karni.agent.history import HISTORY_TOKEN_CAP, compose
from karni.agent.history.cap import CHARS_PER_TOKEN, body_room

ROOT = Path("/project")


class Roomy:
    """Fills exactly the room it is given (plus ``extra`` characters), in 40-character lines."""

    accepts_room = True

    def __init__(self, name: str = "roomy", extra: int = 0) -> None:
        self.name = name
        self.extra = extra
        self.rooms: list[int] = []

    def detect(self, project_root: Path) -> bool:
        return True

    def _fill(self, room: int) -> str:
        self.rooms.append(room)
        length = room + self.extra
        lines, left = [], length
        while left > 0:
            take = min(40, left)
            lines.append("x" * take)
            left -= take + 1  # the newline joining it to the next line counts too
        return "\n".join(lines)

    def context(self, project_root: Path, path: str, room: int = 0) -> str:
        return self._fill(room)

    def project_context(self, project_root: Path, room: int = 0) -> str:
        return self._fill(room)


def test_the_room_of_a_single_provider_is_the_whole_cap_less_its_heading() -> None:
    provider = Roomy()
    block = compose(ROOT, "apps/a.py", providers=[provider])
    heading = "HISTORY: apps/a.py (roomy)"
    assert provider.rooms == [HISTORY_TOKEN_CAP * CHARS_PER_TOKEN - len(heading) - 1]
    assert block is not None and "truncated" not in block
    assert len(block) == HISTORY_TOKEN_CAP * CHARS_PER_TOKEN  # filled to the last character


def test_one_character_more_than_the_room_is_cut() -> None:
    block = compose(ROOT, "apps/a.py", providers=[Roomy(extra=1)])
    assert block is not None and "… truncated at ~300 tokens" in block


@pytest.mark.parametrize("path", ["apps/a.py", None])
def test_providers_that_fill_their_room_are_never_cut(path: str | None) -> None:
    providers = [Roomy("alpha"), Roomy("b"), Roomy("gamma-provider")]
    block = compose(ROOT, path, providers=providers)
    assert block is not None and "truncated" not in block
    assert len(block) <= HISTORY_TOKEN_CAP * CHARS_PER_TOKEN
    for provider in providers:
        heading = f"HISTORY: {path or 'project'} ({provider.name})"
        assert provider.rooms == [body_room(heading, 3)]
        assert heading in block.splitlines()


def test_providers_without_a_brief_method_do_not_take_a_share(kinds) -> None:
    roomy = Roomy()
    compose(ROOT, providers=[roomy, kinds.NoProjectContext()])
    assert roomy.rooms == [body_room("HISTORY: project (roomy)", 1)]


def test_a_provider_without_the_attribute_is_called_as_before(kinds) -> None:
    static = kinds.Static()
    compose(ROOT, "a.py", providers=[static, Roomy()])
    assert static.calls[1] == ("context", ROOT, "a.py")


def test_only_a_true_attribute_counts() -> None:
    class Truthy(Roomy):
        accepts_room = 1  # type: ignore[assignment]

        def context(self, project_root: Path, path: str, **extra: int) -> str:
            assert not extra, "room was passed to a provider that did not set accepts_room = True"
            return "brief"

    assert compose(ROOT, "a.py", providers=[Truthy()]) == "HISTORY: a.py (roomy)\nbrief"


def test_a_tiny_cap_gives_no_negative_room() -> None:
    provider = Roomy()
    compose(ROOT, "apps/a.py", providers=[provider], max_tokens=1)
    assert provider.rooms == [0]
