"""``store_problem``: a provider's optional word to ``karni doctor`` about its store."""

from __future__ import annotations

import time
from pathlib import Path

from karni.agent.history import store_problem


class Provider:
    name = "p"

    def __init__(self, answer=None, *, raises=False, sleeps=0.0, prints=False) -> None:
        self.answer = answer
        self.raises = raises
        self.sleeps = sleeps
        self.prints = prints
        self.roots: list[object] = []

    def detect(self, project_root):
        return True

    def context(self, project_root, path):
        return None

    def store_problem(self, project_root):
        self.roots.append(project_root)
        if self.prints:
            print("noise")
        if self.sleeps:
            time.sleep(self.sleeps)
        if self.raises:
            raise RuntimeError("boom")
        return self.answer


def test_the_line_a_provider_gives_is_cleaned_into_one(tmp_path: Path, capsys) -> None:
    provider = Provider("store.db is damaged\n  move it aside\x1b[31m", prints=True)
    assert store_problem(provider, tmp_path) == "store.db is damaged move it aside"
    assert capsys.readouterr() == ("", "")
    assert provider.roots == [tmp_path]


def test_no_method_no_answer_a_failure_or_a_hang_is_no_problem(tmp_path: Path, monkeypatch) -> None:
    class Bare:
        name = "bare"

        def detect(self, project_root):
            return True

        def context(self, project_root, path):
            return None

    monkeypatch.setenv("KARNI_PROVIDER_TIMEOUT", "0.2")
    assert store_problem(Bare(), tmp_path) is None
    assert store_problem(Provider(None), tmp_path) is None
    assert store_problem(Provider(""), tmp_path) is None
    assert store_problem(Provider(42), tmp_path) is None
    assert store_problem(Provider("x", raises=True), tmp_path) is None
    started = time.monotonic()
    assert store_problem(Provider("late", sleeps=2), tmp_path) is None
    assert time.monotonic() - started < 1.5


def test_a_provider_that_takes_a_str_root_gets_one(tmp_path: Path) -> None:
    provider = Provider("bad")
    provider.accepts_str_root = True
    assert store_problem(provider, tmp_path) == "bad"
    assert provider.roots == [str(tmp_path)]
