"""Writing a fake Chronicle store: ``.chronicle/`` and its fixture, one call at a time.

Tests describe what Chronicle would find (sessions, captured turns and the
files they changed, extracted knowledge, Project Memory) through
:class:`FakeStore` instead of writing the fixture's JSON by hand. Ids and
timestamps are derived deterministically, so a test that adds the same
things gets the same ids.
"""

from __future__ import annotations

import json
import os

from karni.agent.common.files import write_atomic

from karni_provider_testkit.fake_chronicle.formats import FIRST_TS, iso, ms, ulid
from karni_provider_testkit.fake_chronicle.workspace import FIXTURE_NAME, STORE_DIRNAME

__all__ = ["FakeStore"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


class FakeStore:
    """A fake ``.chronicle/`` store and its fixture file.

    Each ``add_*`` call rewrites ``.chronicle/fake-chronicle.json`` atomically.
    Timestamps default to one minute after the latest one in the store, and
    ids are ULIDs derived from the timestamp, so a test that adds the same
    things gets the same ids.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """Wrap the store whose ``.chronicle/`` sits in ``root``."""
        from pathlib import Path

        self.root = Path(root)
        self.chronicle_dir = self.root / STORE_DIRNAME
        self.fixture_path = self.chronicle_dir / FIXTURE_NAME

    def data(self) -> dict[str, Any]:
        """The fixture as stored (an empty description when there is none yet)."""
        if not self.fixture_path.exists():
            return {"fakeChronicle": 1}
        data: dict[str, Any] = json.loads(self.fixture_path.read_text(encoding="utf-8"))
        return data

    def write(self, data: Mapping[str, Any]) -> None:
        """Replace the fixture with ``data`` (see the module docs for its format)."""
        text = json.dumps(dict(data), ensure_ascii=False, indent=2) + "\n"
        write_atomic(str(self.fixture_path), text)

    def _next_ts(self, data: Mapping[str, Any]) -> str:
        stamps = [
            item["ts"]
            for key in ("sessions", "prompts", "knowledge")
            for item in data.get(key, [])
            if isinstance(item, dict) and isinstance(item.get("ts"), str)
        ]
        return iso(ms(max(stamps)) + 60_000) if stamps else FIRST_TS

    def add_session(
        self, session_id: str | None = None, *, private: bool = False, ts: str | None = None
    ) -> str:
        """Add a session; ``private`` marks it privatised (its events are not scanned)."""
        data = self.data()
        ts = ts or self._next_ts(data)
        count = len(data.get("sessions", []))
        session_id = session_id or "ses_" + ulid(ms(ts), f"session {count} {ts}")
        data.setdefault("sessions", []).append({"id": session_id, "private": private, "ts": ts})
        self.write(data)
        return session_id

    def add_prompt(
        self,
        text: str | None,
        files: Mapping[str, tuple[int, int] | Sequence[int] | str],
        *,
        session: str | None = None,
        ts: str | None = None,
        event_id: str | None = None,
    ) -> str:
        """Add a captured turn that changed ``files``; returns its event id.

        Args:
            text: The prompt body (None or blank: the text is unavailable).
            files: Repo-relative POSIX path -> ``(added, removed)`` or ``"bin"``.
            session: Its session; default the last one added (one is created
                when there is none).
            ts: Its timestamp, ``YYYY-MM-DDTHH:MM:SS.mmmZ``.
            event_id: Its ``evt_`` id; by default a ULID for ``ts``.
        """
        if session is None:
            sessions = self.data().get("sessions", [])
            session = sessions[-1]["id"] if sessions else self.add_session()
        data = self.data()
        ts = ts or self._next_ts(data)
        count = len(data.get("prompts", []))
        event_id = event_id or "evt_" + ulid(ms(ts), f"prompt {count} {ts}")
        changes = {
            path: change if isinstance(change, str) else [int(change[0]), int(change[1])]
            for path, change in files.items()
        }
        prompt = {"eventId": event_id, "ts": ts, "session": session, "text": text}
        data.setdefault("prompts", []).append({**prompt, "files": changes})
        self.write(data)
        return event_id

    def add_knowledge(
        self,
        kind: str,
        text: str,
        *,
        event_id: str | None = None,
        session: str | None = None,
        ts: str | None = None,
        role: str | None = None,
        confidence: str = "high",
    ) -> None:
        """Add a decision or TODO extracted from an event.

        By default it comes from the last prompt added (its event, session and
        time, role ``human``); with another ``event_id`` (an agent response)
        pass the session, and the time defaults to a minute after the latest.
        """
        data = self.data()
        prompts = data.get("prompts", [])
        source = next(
            (p for p in reversed(prompts) if event_id in (None, p["eventId"])),
            None,
        )
        if source is not None:
            event_id = event_id or source["eventId"]
            session = session or source["session"]
            ts = ts or source["ts"]
            role = role or "human"
        ts = ts or self._next_ts(data)
        event_id = event_id or "evt_" + ulid(ms(ts), f"response {text}")
        item = {
            "kind": kind,
            "text": text,
            "eventId": event_id,
            "session": session,
            "ts": ts,
            "role": role or "agent",
            "confidence": confidence,
        }
        data.setdefault("knowledge", []).append(item)
        self.write(data)

    def add_memory(
        self,
        kind: str,
        content: str,
        *,
        status: str = "active",
        sessions: Sequence[str] | None = None,
        memory_id: str | None = None,
    ) -> str:
        """Add a Project Memory item related to ``sessions`` (default: the last one)."""
        import hashlib

        data = self.data()
        if sessions is None:
            known = data.get("sessions", [])
            sessions = [known[-1]["id"]] if known else []
        count = len(data.get("memory", []))
        digest = hashlib.sha256(f"{count} {kind} {content}".encode()).hexdigest()
        memory_id = memory_id or f"mem_{digest[:12]}"
        item = {
            "id": memory_id,
            "kind": kind,
            "status": status,
            "content": content,
            "sessions": list(sessions),
        }
        data.setdefault("memory", []).append(item)
        self.write(data)
        return memory_id
