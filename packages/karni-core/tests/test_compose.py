"""Composition: headings, order, cleaning, and which providers are asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from karni.agent.history import compose, detecting_providers

ROOT = Path("/project")


def test_no_providers_means_no_block():
    assert compose(ROOT, "a.py", providers=[]) is None


def test_heading_and_brief(kinds):
    block = compose(ROOT, "apps/events/models.py", providers=[kinds.Static(brief="did a thing")])
    assert block == "HISTORY: apps/events/models.py (static)\ndid a thing"


def test_providers_in_name_order(kinds):
    block = compose(
        ROOT,
        "a.py",
        providers=[kinds.Static(name="zeta", brief="z"), kinds.Static(name="alpha", brief="a")],
    )
    assert block == "HISTORY: a.py (alpha)\na\nHISTORY: a.py (zeta)\nz"


def test_provider_without_store_is_never_asked_for_a_brief(kinds):
    provider = kinds.Static(detect=False)
    assert compose(ROOT, "a.py", providers=[provider]) is None
    assert [call[0] for call in provider.calls] == ["detect"]


@pytest.mark.parametrize("brief", [None, "", "   \n\n  \t\n", b"bytes brief", 42, ["a list"]])
def test_nothing_to_say_adds_nothing(kinds, brief):
    assert compose(ROOT, "a.py", providers=[kinds.Static(brief=brief)]) is None


def test_project_brief_when_no_path(kinds):
    providers = [kinds.Static(name="with", project="decided X"), kinds.NoProjectContext()]
    assert compose(ROOT, providers=providers) == "HISTORY: project (with)\ndecided X"


def test_provider_receives_a_path_object_and_the_path_as_given(kinds):
    provider = kinds.Static()
    compose("/some/root", "dir/file name.py", providers=[provider])
    assert provider.calls[1] == ("context", Path("/some/root"), "dir/file name.py")
    assert isinstance(provider.calls[0][1], Path)


def test_blank_lines_dropped_trailing_whitespace_trimmed(kinds):
    brief = "\n\nfirst   \n\n   \nsecond\t\n\r\n"
    block = compose(ROOT, "a.py", providers=[kinds.Static(brief=brief)])
    assert block == "HISTORY: a.py (static)\nfirst\nsecond"


def test_escape_sequences_and_control_characters_removed(kinds):
    brief = (
        "\x1b[31mred\x1b[0m text\n"
        "\x1b]0;window title\x07after osc\n"
        "bell\x07 null\x00 back\x08space\n"
        "tab\there\n"
        "bidi \u202eevil\u202c end\n"
        "c1 \x9b31m csi\n"
        "keep ünïcödé — and → arrows\n"
    )
    block = compose(ROOT, "a.py", providers=[kinds.Static(brief=brief)])
    assert block.split("\n")[1:] == [
        "red text",
        "after osc",
        "bell null backspace",
        "tab here",
        "bidi evil end",
        "c1  csi",
        "keep ünïcödé — and → arrows",
    ]
    assert "\x1b" not in block


def test_heading_path_and_name_are_cleaned(kinds):
    block = compose(
        ROOT, "evil\x1b[2J.py", providers=[kinds.Static(name="bad\x1b[31mname", brief="b")]
    )
    assert block == "HISTORY: evil.py (badname)\nb"


def test_object_without_a_name_is_ignored(kinds):
    class Nameless:
        def detect(self, root):
            return True

        def context(self, root, path):
            return "never shown"

    assert compose(ROOT, "a.py", providers=[Nameless()]) is None


def test_detecting_providers_in_name_order(kinds):
    b, a, none = (
        kinds.Static(name="b"),
        kinds.Static(name="a"),
        kinds.Static(name="c", detect=False),
    )
    assert detecting_providers(ROOT, [b, none, a]) == [a, b]


class Marked:
    """Declares a store marker; records whether detect was asked."""

    name = "marked"
    store_markers = (".marked-store",)

    def __init__(self, walk_up=False):
        self.store_markers_walk_up = walk_up
        self.asked = 0

    def detect(self, project_root):
        self.asked += 1
        return (project_root / ".marked-store").is_dir() or (
            self.store_markers_walk_up and (project_root.parent / ".marked-store").is_dir()
        )

    def context(self, project_root, path):
        return "marked brief"


def test_store_markers_let_karni_skip_detect(tmp_path):
    provider = Marked()
    assert compose(tmp_path, "a.py", providers=[provider]) is None
    assert provider.asked == 0
    (tmp_path / ".marked-store").mkdir()
    assert compose(tmp_path, "a.py", providers=[provider]) == "HISTORY: a.py (marked)\nmarked brief"
    assert provider.asked == 1


def test_store_markers_walk_up_only_when_asked(tmp_path):
    (tmp_path / ".marked-store").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    assert compose(project, "a.py", providers=[Marked(walk_up=False)]) is None
    walking = Marked(walk_up=True)
    assert compose(project, "a.py", providers=[walking]) == "HISTORY: a.py (marked)\nmarked brief"


def test_a_marker_that_exists_still_leaves_the_decision_to_detect(tmp_path):
    (tmp_path / ".marked-store").write_text("a plain file, not a store")
    provider = Marked()
    assert compose(tmp_path, "a.py", providers=[provider]) is None
    assert provider.asked == 1


@pytest.mark.parametrize("markers", ["not-a-tuple", (), (1, 2), None, ("",)])
def test_malformed_markers_are_ignored_and_detect_is_asked(tmp_path, markers):
    provider = Marked()
    provider.store_markers = markers
    (tmp_path / ".marked-store").mkdir()
    assert compose(tmp_path, "a.py", providers=[provider]) == "HISTORY: a.py (marked)\nmarked brief"
    assert provider.asked == 1


def test_no_store_composition_never_imports_pathlib(tmp_path):
    import subprocess
    import sys

    code = f"""
import sys
from karni.agent.history import compose, detecting_providers

class Marked:
    name = "marked"
    store_markers = (".marked-store",)
    def detect(self, root):
        return True
    def context(self, root, path):
        return "x"

assert compose({str(tmp_path)!r}, "a.py", providers=[Marked()]) is None
assert detecting_providers({str(tmp_path)!r}, providers=[Marked()]) == []
print(sorted(m for m in ("pathlib", "threading", "re", "typing") if m in sys.modules))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


def test_walk_up_markers_follow_a_symlinked_root_to_the_real_parents(tmp_path):
    real_parent = tmp_path / "real"
    (real_parent / ".marked-store").mkdir(parents=True)
    (real_parent / "project").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "project").symlink_to(real_parent / "project")
    walking = Marked(walk_up=True)
    walking.detect = lambda root: True
    block = compose(elsewhere / "project", "a.py", providers=[walking])
    assert block == "HISTORY: a.py (marked)\nmarked brief"
