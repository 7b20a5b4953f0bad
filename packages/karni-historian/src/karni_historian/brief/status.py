"""``status``: how far a session is condensed and what the historian will do next.

:func:`status_data` gathers every fact as plain JSON-ready data (the stable
shape ``status --json`` prints, ``docs/historian/status.md``);
:func:`status_text` words the same facts for people.
"""

from __future__ import annotations

import os

from karni_historian.brief.cache import BlockShape, preview_block
from karni_historian.budget import estimate_tokens
from karni_historian.condense.models.dumps import DUMP_FOLDER
from karni_historian.condense.models.session import chain_for_session
from karni_historian.condense.runner import plan_run
from karni_historian.shared_folder import listing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.condense.models.settings import ConfigFiles, ResolvedChain
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = ["STATUS_SCHEMA", "status_data", "status_text"]

STATUS_SCHEMA = 1
"""The version of the ``status --json`` shape; it changes only when a key changes meaning."""


def status_data(
    store: Store, session_id: str, settings: Settings, files: ConfigFiles
) -> dict[str, Any]:
    """Every ``status`` fact of one session, as JSON-ready data."""
    session = store.session(session_id)
    assert session is not None
    covered = store.last_compartment_end(session_id)
    raw = store.message_count(session_id)
    failures, last_error = store.failure(session_id)
    chain = chain_for_session(store, session_id, files, default_window=settings.historian_context)
    shape = BlockShape(settings.history_budget, settings.temporal_awareness, chain.name)
    block, pending = preview_block(store, session_id, shape)
    last = store.last_rebuild(session_id)
    shared = not store.is_local_session(session_id)
    return {
        "schema": STATUS_SCHEMA,
        "session": {
            "id": session_id,
            "source": session.source,
            "title": session.title,
            "model": session.model,
            "shared": shared,
            "author": store.shared_authors().get(session_id) if shared else None,
        },
        "messages": {"raw": raw, "condensed_to": covered, "uncondensed": max(0, raw - covered)},
        "compartments": store.compartment_count(session_id),
        "history": {"tokens": estimate_tokens(block), "budget": settings.history_budget},
        "chain": _chain_data(chain),
        "rebuild": {
            "last_at": last.rebuilt_at if last else None,
            "last_reason": last.reason if last else None,
            "pending": pending,
        },
        "trigger": _trigger_data(store, session_id, settings),
        "last_run": store.last_run(session_id),
        "failures": {
            "streak": failures,
            "last_error": last_error if failures else None,
            "latest_dump": _latest_dump(store.root) if failures else None,
        },
        "shared": _shared_data(store.root, session_id),
    }


def _shared_data(root: str, session_id: str) -> dict[str, Any]:
    """The sizes of the shared history: this session's file, and the folder's files in all."""
    files = [(name, size) for name, size, _mtime, kind in listing(root) if kind == "file"]
    own = next((size for name, size in files if name == f"{session_id}.json"), None)
    return {"session_bytes": own, "files": len(files), "bytes": sum(s for _, s in files)}


def _chain_data(chain: ResolvedChain) -> dict[str, Any]:
    """The resolved chain: each model with where it came from, and the chain's settings."""
    origins = chain.origins
    return {
        "harness": chain.harness,
        "disabled": chain.disabled,
        "models": [
            {
                "model": entry.model_id,
                "origin": entry.origin,
                "context_window": entry.context_window,
                "endpoint": entry.endpoint,
                "key_variable": entry.key_variable,
                "key_set": bool(entry.key_variable and os.environ.get(entry.key_variable)),
                "max_tokens": entry.max_tokens,
                "temperature": entry.temperature,
                "timeout": entry.timeout,
                "reasoning": entry.reasoning,
            }
            for entry in chain.entries
        ],
        "two_pass": {"value": chain.two_pass, "origin": origins.get("two_pass", "default")},
        "origins": dict(origins),
        "note": chain.note or None,
    }


def _trigger_data(store: Store, session_id: str, settings: Settings) -> dict[str, Any]:
    """Whether ``run`` would condense now, and why (``docs/historian/triggers.md``)."""
    plan = plan_run(store, session_id, settings)
    if not plan.settled:
        return {
            "settled": False,
            "fire": False,
            "reason": "nothing_settled",
            "detail": "the newest five prompts and their answers stay raw",
        }
    decision = plan.decision()
    return {
        "settled": True,
        "fire": decision.fire,
        "reason": decision.reason,
        "detail": decision.detail,
    }


def _latest_dump(root: str) -> str | None:
    """The newest failure dump's path (dump names start with their time), None when none."""
    folder = os.path.join(root, DUMP_FOLDER)
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".json"))
    except OSError:
        return None
    return os.path.join(folder, names[-1]) if names else None


def status_text(data: dict[str, Any], *, verbose: bool = False) -> str:
    """The ``status`` report of :func:`status_data`, worded for people.

    With ``verbose``, every model of the chain with all its settings and where
    each setting of the chain came from (``status -v``).
    """
    session, messages = data["session"], data["messages"]
    if session.get("shared"):
        return _shared_session_text(data)
    failures = data["failures"]
    lines = [
        f"Session {session['id']} ({session['source']}): {session['title'] or 'untitled'}",
        f"- Raw messages: {messages['raw']} ({messages['uncondensed']} after the last compartment)",
        f"- Historian: {_progress(data['compartments'], messages['condensed_to'], failures)}",
    ]
    if failures["streak"]:
        lines.append(
            f"- Historian failures in a row: {failures['streak']} (last: {failures['last_error']})"
        )
        if failures["latest_dump"]:
            lines.append(f"- Latest failure dump: {failures['latest_dump']}")
    lines += _chain_lines(data["chain"])
    if verbose:
        lines += _chain_detail_lines(data["chain"], data["session"].get("model"))
    lines.append(_trigger_line(data["trigger"]))
    lines.append(_last_run_line(data["last_run"]))
    lines.append(_rebuild_line(data["rebuild"]))
    lines += _shared_lines(data["shared"])
    tokens, budget = data["history"]["tokens"], data["history"]["budget"]
    lines += [
        "",
        "### History Compression",
        f"- Compartments: {data['compartments']}",
        f"- History block: ~{tokens} tokens",
        f"- History budget: ~{budget} tokens ({round(tokens * 100 / budget)}% used)",
        "- Older compartments demote tiers automatically at render time to fit the budget",
    ]
    return "\n".join(lines)


def _shared_session_text(data: dict[str, Any]) -> str:
    """A teammate's shared session: where it comes from, and that it is not condensed here."""
    session = data["session"]
    by = f"by {session['author']}" if session["author"] else "from this project's history"
    return "\n".join(
        [
            f"Session {session['id']} ({session['source']}): {session['title'] or 'untitled'}",
            f"- Shared {by} (.karni/history/): its compartments, facts and notes are read;"
            " it has no raw messages here and is never condensed here",
            f"- Compartments: {data['compartments']}",
        ]
    )


def _shared_lines(shared: dict[str, Any]) -> list[str]:
    """``- Shared: …`` when the project has shared history; nothing otherwise."""
    if not shared["files"]:
        return []
    mine = shared["session_bytes"]
    this = "not shared" if mine is None else f"{mine:,} bytes"
    return [
        f"- Shared: this session {this}; .karni/history/ holds {shared['files']} file(s), "
        f"{shared['bytes']:,} bytes"
    ]


def _chain_lines(chain: dict[str, Any]) -> list[str]:
    harness = chain["harness"] or "no harness block"
    if chain["disabled"]:
        where = chain["origins"].get("disable", "configuration")
        return [f"- Chain ({harness}): disabled (`historian.disable = true` in the {where})"]
    models = ", then ".join(f"{m['model']} ({m['origin']})" for m in chain["models"])
    two_pass = chain["two_pass"]
    lines = [
        f"- Chain ({harness}): {models}",
        f"- two_pass: {'on' if two_pass['value'] else 'off'} ({two_pass['origin']})",
    ]
    if chain["note"]:
        lines.append(f"- Chain note: {chain['note']}")
    return lines


def _chain_detail_lines(chain: dict[str, Any], session_model: str | None) -> list[str]:
    """``status -v``: each model's settings, each chain setting's origin, the session model."""
    lines = [f"- Session model (from the transcript): {session_model or 'none recorded'}"]
    for number, model in enumerate(chain["models"], 1):
        key = model["key_variable"]
        key_text = (
            "no key needed" if not key else f"key ${key} {'set' if model['key_set'] else 'not set'}"
        )
        settings = [
            f"endpoint {model['endpoint'] or 'the default'}",
            key_text,
            f"context window {model['context_window']}",
            f"max_tokens {model['max_tokens']}",
            f"temperature {'default' if model['temperature'] is None else model['temperature']}",
            f"timeout {model['timeout']:g} s",
        ]
        if model["reasoning"]:
            settings.append(f"reasoning {model['reasoning']}")
        lines.append(f"  {number}. {model['model']} ({model['origin']}): {', '.join(settings)}")
    origins = ", ".join(f"{key} from {where}" for key, where in sorted(chain["origins"].items()))
    lines.append(f"- Chain settings: {origins or 'all defaults'}")
    return lines


def _trigger_line(trigger: dict[str, Any]) -> str:
    if trigger["fire"]:
        return f"- Trigger: {trigger['reason']} fires ({trigger['detail']})"
    return f"- Trigger: none fires ({trigger['detail']})"


def _last_run_line(run: dict[str, Any] | None) -> str:
    if run is None:
        return "- Last run: none yet"
    duration = "" if run["duration_ms"] is None else f" in {run['duration_ms'] / 1000:.1f}s"
    outcome = f"{run['outcome']}{duration} at {run['at']}"
    return f"- Last run: {run['kind']} with {run['model']}: {outcome}"


def _rebuild_line(rebuild: dict[str, Any]) -> str:
    last = f"{rebuild['last_at']} ({rebuild['last_reason']})" if rebuild["last_at"] else "never"
    pending = f"pending: {rebuild['pending']}" if rebuild["pending"] else "none pending"
    return f"- History rebuilt: {last}; {pending}"


def _progress(compartments: int, covered: int, failures: dict[str, Any]) -> str:
    """How far the historian got; a failure streak never reads as "not run yet"."""
    if compartments:
        return f"messages 1-{covered} condensed"
    return "failing, no compartment yet" if failures["streak"] else "not run yet"
