r"""A faithful double of Gigai Chronicle's ``chronicle`` command, for tests.

Gigai Chronicle cannot be installed here, so providers are tested against this
double. It follows ``docs/chronicle-contract.md`` for the two commands a history
provider uses, ``chronicle context <file> [--limit N]`` and ``chronicle
knowledge [--type decision|todo] [--session ID]`` (``--json`` anywhere on the
command line):

- the walk-up from the working directory to the nearest entry named
  ``.chronicle`` (exit 3 and ``not a chronicle project (no .chronicle directory
  found)`` when there is none), ``<file>`` resolved against the working
  directory and made relative to the directory holding ``.chronicle``;
- commander's two-level argument parsing, Chronicle's checks in Chronicle's
  order (usage, project, path, limit or type) and their exit codes and stderr
  messages (usage errors 2, not a project 3, anything unexpected 1);
- opening the workspace: ``.chronicle/.local/machine.json`` is written, a
  ``ProjectOpened`` event is appended once per UTC day and a moved folder gives
  ``note: workspace moved (<old> → <new>)`` on stderr with exit 0; a
  ``.chronicle`` that is a plain file fails here with exit 1;
- one compact JSON line with keys in Chronicle's order, non-ASCII as raw UTF-8;
- the exact Markdown templates (empty pack, Project Memory block, knowledge
  fallback), prompt selection (the last N turns that touched the path, oldest
  first; a directory covers what is under it) and knowledge in store scan
  order (oldest first, one block per session), deduplicated.

Human (non-JSON) output follows the contract's templates; the wording of help
texts, the ``knowledge`` "nothing found" paragraph and commander's messages
beyond those the contract quotes are this double's own (the contract marks
them as inferred). ``chronicle knowledge --type decision`` returns the items
the fixture marks as decisions; the double does not re-run Chronicle's
extraction rules over prompt text. Only ``context``, ``knowledge`` and
``help`` exist; any other command is ``error: unknown command '<name>'`` and no
command at all is ``error: missing command …`` (both exit 2).

Running it
==========

``python -m karni_provider_testkit.fake_chronicle ARGS`` or the ``fake-chronicle``
console script. :meth:`FakeChronicle.install` writes an executable named
``chronicle``: a POSIX shell script that sets ``FAKE_CHRONICLE_HOME`` and
replaces itself (``exec``) with the current interpreter, so the pid the caller
sees is the double's own.

The modules, one responsibility each: ``arguments`` (commander's parsing),
``workspace`` (walk-up, opening the store, reading its fixture), ``packs``
(choosing prompts, knowledge and memory), ``markdown`` (the output templates),
``commands`` (one command line, checks in Chronicle's order), ``program``
(the executable: call log, settings, output), ``config`` and ``calls`` (the
per-test files), ``store`` (:class:`FakeStore`), ``double``
(:class:`FakeChronicle`) and ``formats`` (JSON, ids, timestamps). This
package imports them only when a name is first used, so the executable and
the pytest plugin pay only for what they run.

The store fixture: ``.chronicle/fake-chronicle.json``
=====================================================

What Chronicle would read from its event log and git checkpoint refs is
described by one JSON file inside the fake store. A bare ``.chronicle/``
directory without it is a valid, empty store (like a fresh ``chronicle
init``). Every key is optional::

    {
      "fakeChronicle": 1,
      "sessions": [{"id": "ses_01K…", "private": true}],
      "prompts": [
        {"eventId": "evt_01K…", "ts": "2026-07-20T09:12:05.331Z",
         "session": "ses_01K…", "text": "We should use Redis…",
         "files": {"src/session/store.ts": [48, 0], "logo.png": "bin"}}
      ],
      "knowledge": [
        {"kind": "decision", "text": "Going with Redis…", "eventId": "evt_01K…",
         "session": "ses_01K…", "ts": "2026-07-20T09:12:41.902Z",
         "role": "agent", "confidence": "high"}
      ],
      "memory": [
        {"id": "mem_2b7e41c09d3a", "kind": "decision", "status": "active",
         "content": "No, keep session state in PostgreSQL.", "sessions": ["ses_01K…"]}
      ]
    }

- ``prompts`` are the captured turns (checkpoints). ``files`` maps each
  repo-relative POSIX path the turn changed to ``[added, removed]`` lines, or
  ``"bin"`` for a binary change. Turns are ordered by ``eventId`` (ULIDs sort
  by time).
- ``sessions`` only needs listing to mark one ``private``: a privatised
  session's events are not scanned, so its prompts come out with ``ts``,
  ``session`` and ``text`` null and its knowledge is never returned.
- ``knowledge`` items are the extracted decisions and TODOs. Output order is
  the store's scan order: by session id, then by event id (fixture order
  among equal ones), whatever order the file lists them in.
- ``memory`` items are Project Memory: ``kind`` (``decision``,
  ``constraint``, ``known_issue``, ``failed_approach``, ``todo``; any other
  kind is never rendered), ``status`` (``active``, ``superseded``,
  ``rejected``, ``candidate``, ``resolved``, …), ``content`` and the related
  ``sessions``.

:class:`FakeStore` writes this file for you (``add_session``, ``add_prompt``,
``add_knowledge``, ``add_memory``); :meth:`FakeChronicle.example_store` copies
the store behind the examples of docs/chronicle-contract.md.

Per-test behaviour: ``$FAKE_CHRONICLE_HOME/config.json``
========================================================

The installed script sets ``FAKE_CHRONICLE_HOME`` to the double's home
folder. ``config.json`` there (written by :meth:`FakeChronicle.configure`)
changes how every run behaves; all keys are optional::

    {"delay": 30, "exit_code": 3, "stderr": "⚠ E_FOREIGN_REPO: …\n",
     "stdout": "not json\n", "patch": {"context": {"markdown": "…"}},
     "drop": {"context": ["markdown"]}, "grandchild": true}

- ``delay``: seconds to sleep after recording the call (timeout tests);
- ``grandchild``: first start a child process that sleeps for ten minutes,
  holding the same stdout, to check that a client kills the whole group
  (``"own-session"``: the child moves to a session of its own, leaving the
  group, as a daemon does);
- ``stderr``: written to stderr first (warnings with exit 0);
- ``patch`` / ``drop``: keys set in (new keys go last) or removed from the
  ``--json`` reply of that command;
- ``stdout``: printed instead of the command's own stdout;
- ``exit_code``: the exit status, instead of the command's own.

The call log: ``$FAKE_CHRONICLE_HOME/calls.jsonl``
==================================================

Every run appends one JSON line before doing anything else:
``{"argv": [...], "cwd": "...", "pid": 123, "stdin": "eof", "grandchild": null}``.
``argv`` excludes the program name; ``stdin`` is ``"closed"`` (fd 0 not open),
``"eof"`` (end of file straight away, e.g. ``/dev/null``), ``"data"`` or
``"open"`` (a terminal or pipe with nothing to read yet).
:meth:`FakeChronicle.calls` reads it back as :class:`ChronicleCall` objects.

The ``fake_chronicle`` pytest fixture
=====================================

Registered by karni-provider-testkit's pytest plugin, so any test in an
environment with the testkit installed can ask for it. It returns a
:class:`FakeChronicle` whose ``chronicle`` script is installed and whose bin
folder is prepended to ``PATH`` (through ``monkeypatch``, so subprocesses such
as the real ``karni`` command find it too)::

    def test_brief(fake_chronicle, tmp_path):
        store = fake_chronicle.create_store(tmp_path)
        session = store.add_session()
        store.add_prompt("make events soft-deletable", {"apps/events/models.py": (12, 3)})
        store.add_memory("failed_approach", "Hard delete — reverted", sessions=[session])
        ...  # run `karni context --with-history apps/events/models.py` in tmp_path
        assert fake_chronicle.calls()[0].argv == [
            "context", "apps/events/models.py", "--json", "--limit", "5"]
"""

from __future__ import annotations

from karni_provider_testkit.lazy import lazy_attributes

__all__ = [
    "FIXTURE_NAME",
    "HOME_VARIABLE",
    "NOT_A_PROJECT",
    "VERSION",
    "ChronicleCall",
    "FakeChronicle",
    "FakeStore",
    "main",
    "pid_alive",
]

_WHERE = {
    "FIXTURE_NAME": ".workspace",
    "HOME_VARIABLE": ".config",
    "NOT_A_PROJECT": ".commands",
    "VERSION": ".formats",
    "ChronicleCall": ".calls",
    "FakeChronicle": ".double",
    "FakeStore": ".store",
    "main": ".program",
    "pid_alive": ".calls",
    "fake_chronicle": "..plugin",  # the fixture, importable from here as before
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_provider_testkit.fake_chronicle.calls import ChronicleCall, pid_alive
    from karni_provider_testkit.fake_chronicle.commands import NOT_A_PROJECT
    from karni_provider_testkit.fake_chronicle.config import HOME_VARIABLE
    from karni_provider_testkit.fake_chronicle.double import FakeChronicle
    from karni_provider_testkit.fake_chronicle.formats import VERSION
    from karni_provider_testkit.fake_chronicle.program import main
    from karni_provider_testkit.fake_chronicle.store import FakeStore
    from karni_provider_testkit.fake_chronicle.workspace import FIXTURE_NAME


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
