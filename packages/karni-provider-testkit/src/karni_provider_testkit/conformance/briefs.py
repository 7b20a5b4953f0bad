"""The conformance checks of what a brief holds and how Karni shows it.

A brief carries the recorded text, no control characters, fits the room
Karni gives a provider that asks for it, and comes out of Karni's
composition under its heading and the cap; ``full_command`` is one line a
shell splits back into the file's path.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import pytest

from karni_provider_testkit.conformance.base import ContractBase

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["COMMAND_PATHS", "ROOMS", "BriefChecks"]

ROOMS: tuple[int, ...] = (0, 30, 200, 1_100)
"""The rooms (in characters) a provider with ``accepts_room`` is asked to keep within."""

COMMAND_PATHS: tuple[str | None, ...] = (
    "apps/events/models.py",
    "apps/events/my file with spaces.py",
    "apps/événements/modèle_ü.py",
    'apps/$(touch pwned)/it\'s "quoted"; rm -rf.py',
    None,
)

_BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _control_characters(text: str) -> list[str]:
    import unicodedata

    return sorted(
        {
            repr(char)
            for char in text
            if char != "\n" and (unicodedata.category(char) == "Cc" or char in _BIDI_CONTROLS)
        }
    )


class BriefChecks(ContractBase):
    """The brief's text, its characters, its room, and the block Karni composes from it."""

    def test_context_contains_the_recorded_text(self, contract_store: Path) -> None:
        """``context`` returns the brief ``record`` wrote, with its text.

        Fix: make sure ``context(project_root, path)`` finds records about the
        project-relative POSIX ``path`` Karni passes (``apps/events/models.py``),
        or fix ``record`` in the test class so it writes what the provider reads.
        """
        brief = self._call(self.make_provider().context, contract_store, self.brief_path)
        assert isinstance(brief, str), f"context() returned {brief!r}, expected the brief"
        assert self.marker in brief, f"the brief does not contain {self.marker!r}:\n{brief}"

    @pytest.mark.parametrize("path", COMMAND_PATHS)
    def test_full_command_survives_shlex_split(
        self, contract_store: Path, path: str | None
    ) -> None:
        """``full_command`` (if defined) is one line a shell splits back into the file's path.

        Karni prints it in the truncation line for the user to paste. Fix:
        quote the path with ``shlex.quote(path)``; return None when there is no
        such command (for ``path=None`` too, if you have no project-level one).
        """
        provider = self.make_provider()
        method = getattr(provider, "full_command", None)
        if not callable(method):
            pytest.skip("the provider has no full_command (it is optional)")
        command = self._call(method, contract_store, path)
        if command is None:
            return
        assert isinstance(command, str), f"full_command() returned {type(command).__name__}"
        assert command.strip(), "full_command() returned a blank command; return None instead"
        assert not _control_characters(command), (
            f"full_command() has control characters {_control_characters(command)}"
        )
        assert "\n" not in command, f"full_command() must be one line: {command!r}"
        try:
            words = shlex.split(command)
        except ValueError as error:
            pytest.fail(f"a shell cannot split {command!r} ({error}); use shlex.quote(path)")
        if path:
            longest = max(path.split(), key=len)
            if longest in command:
                assert any(path in word for word in words), (
                    f"{command!r} names {path!r} but a shell splits it into {words!r}; "
                    f"use shlex.quote(path)"
                )

    def test_briefs_carry_no_control_characters(self, contract_store: Path) -> None:
        r"""Briefs contain no control characters (tabs, ``\r``, escapes, bidi overrides).

        Karni strips them anyway, but a provider that colours its output or
        passes a tool's raw bytes through is misbehaving. Fix: run tools with
        ``NO_COLOR=1``/``--no-color``, decode as UTF-8, and drop ``\x1b[...m``
        sequences and ``\r``.
        """
        provider = self.make_provider()
        briefs = {"context": self._call(provider.context, contract_store, self.brief_path)}
        if callable(getattr(provider, "project_context", None)):
            briefs["project_context"] = self._call(provider.project_context, contract_store)
        for method, brief in briefs.items():
            if isinstance(brief, str):
                assert not _control_characters(brief), (
                    f"{method}() returned control characters {_control_characters(brief)}"
                )

    @pytest.mark.parametrize("room", ROOMS)
    def test_a_brief_keeps_within_its_room(self, contract_store: Path, room: int) -> None:
        """With ``accepts_room = True``, every brief fits in the ``room`` characters Karni gives.

        Karni measures the brief as it shows it: blank lines dropped, trailing
        whitespace trimmed, the lines joined with newlines, the heading not
        counted. Skipped for a provider without ``accepts_room``. Fix: stop
        adding lines once the next one would pass ``room`` (and return None
        when not even one fits), or drop ``accepts_room`` and let Karni cut.
        """
        import functools

        from karni.agent.common.sanitize import iter_brief_lines

        provider = self.make_provider()
        if getattr(provider, "accepts_room", False) is not True:
            pytest.skip("the provider does not set accepts_room = True")
        self.record(contract_store, self.brief_path, "a longer note " * 200)
        calls = {"context": functools.partial(provider.context, contract_store, self.brief_path)}
        if callable(getattr(provider, "project_context", None)):
            calls["project_context"] = functools.partial(provider.project_context, contract_store)
        for method, call in calls.items():
            brief = self._call(functools.partial(call, room=room))
            shown = "\n".join(iter_brief_lines(brief)) if isinstance(brief, str) else ""
            assert len(shown) <= room, (
                f"{method}(..., room={room}) gave a brief of {len(shown)} characters:\n{shown}"
            )

    def test_compose_shows_the_brief_under_the_cap(self, contract_store: Path) -> None:
        """Karni's composition layer shows the brief under its heading, within the cap.

        Fix: ``detect`` must be true for the store and ``context`` must return
        the brief; put what matters most first, since Karni keeps the start.
        """
        from karni.agent.history import HISTORY_TOKEN_CAP, compose, estimate_tokens

        provider = self.make_provider()
        block = compose(contract_store, self.brief_path, providers=[provider])
        assert block is not None, "compose() returned None: no brief reached Karni"
        heading = f"HISTORY: {self.brief_path} ({provider.name})"
        assert block.splitlines()[0] == heading, f"unexpected heading in:\n{block}"
        assert self.marker in block, f"the marker {self.marker!r} was cut or lost:\n{block}"
        assert estimate_tokens(block) <= HISTORY_TOKEN_CAP
