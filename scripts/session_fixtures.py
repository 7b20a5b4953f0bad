"""Put a recorded agent session where its harness keeps it, for a project of ours.

A real transcript names the folder it was recorded in (``/Users/ann/code/x``,
or ``__PROJECT__`` in the sessions bundled under ``examples/sessions/``). To
read it as the harness's own, for a throwaway project, every mention of that
folder is replaced by the project's path and the file is written under the
harness's folder in a private environment (``isolated_env``), so that a
plain ``karni-historian ingest`` finds it exactly as it would on a user's
machine. Used by ``scripts/check_real_transcripts.py`` and
``scripts/brief_eval.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

PLACEHOLDER = "__PROJECT__"
"""How the sessions bundled in ``examples/sessions/`` write their project's folder."""


def isolated_env(work: str) -> dict[str, str]:
    """An environment whose harness folders are all empty folders under ``work``."""
    env = {**os.environ, "HOME": os.path.join(work, "home")}
    for variable, folder in (
        ("CLAUDE_CONFIG_DIR", "claude"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("PI_CODING_AGENT_DIR", "pi"),
        ("KARNI_CACHE_DIR", "karni-cache"),
        ("CODEX_HOME", "codex"),
        ("GEMINI_CLI_HOME", "gemini"),
        ("OMP_CODING_AGENT_DIR", "omp"),
    ):
        env[variable] = os.path.join(work, folder)
    for variable in (
        "PI_CODING_AGENT_SESSION_DIR",
        "OPENCODE_DB",
        "CI",
        "KARNI_AGENT_CONDITIONS",
        "AIDER_CHAT_HISTORY_FILE",
        "OMP_PROFILE",
    ):
        env.pop(variable, None)
    return env


def jsonl(path: Path) -> list[dict]:
    """The JSON objects of a JSON Lines file; lines that are not one are skipped."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def recorded_root(harness: str, files: list[Path]) -> str:
    """The folder ``files`` were recorded in, as they name it."""
    if files[0].is_dir() and harness in TREES:
        return PLACEHOLDER
    text = files[0].read_text(encoding="utf-8") if files[0].is_file() else ""
    if PLACEHOLDER in text:
        return PLACEHOLDER
    if harness == "claude-code":
        cwds = {r["cwd"] for r in jsonl(files[0]) if isinstance(r.get("cwd"), str)}
        return min(cwds, key=len)
    if harness == "pi":
        return jsonl(files[0])[0]["cwd"]
    if harness == "opencode":
        sessions = sorted((files[0] / "session").glob("*/*.json"))
        return json.loads(sessions[0].read_text())["directory"]
    raise ValueError(f"no installer for the harness {harness!r}")


def claude_key(root: str) -> str:
    """Claude Code's folder name for a project: every character outside [A-Za-z0-9] is ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", root)


def install_claude(files: list[Path], recorded: str, root: str, env: dict) -> None:
    """The session file (and its subagent files) under ``$CLAUDE_CONFIG_DIR/projects/<key>/``."""
    folder = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / claude_key(root)
    main = files[0]
    for path in files:
        target = folder / (
            path.name if path.parent == main.parent else path.relative_to(main.parent)
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8").replace(recorded, root))


def install_pi(files: list[Path], recorded: str, root: str, env: dict) -> None:
    """The session under ``$PI_CODING_AGENT_DIR/sessions/--<path>--/``."""
    name = "--" + root.lstrip("/").replace("/", "-") + "--"
    folder = Path(env["PI_CODING_AGENT_DIR"]) / "sessions" / name
    folder.mkdir(parents=True, exist_ok=True)
    text = files[0].read_text(encoding="utf-8").replace(recorded, root)
    (folder / f"2025-01-01T00-00-00-000Z_{files[0].stem}.jsonl").write_text(text)


def install_opencode(files: list[Path], recorded: str, root: str, env: dict) -> None:
    """The storage folder as ``$XDG_DATA_HOME/opencode/storage``."""
    target = Path(env["XDG_DATA_HOME"]) / "opencode" / "storage"
    shutil.copytree(files[0], target)
    for path in target.rglob("*.json"):
        path.chmod(0o644)
        path.write_text(path.read_text(encoding="utf-8").replace(recorded, root))


def _copy_tree(tree: Path, target: Path, replacements: dict[str, str]) -> None:
    """Every file of ``tree`` under ``target``, with the placeholders replaced in text and names."""
    for path in sorted(tree.rglob("*")):
        if path.is_dir() or path.name == "README.md":
            continue
        relative = str(path.relative_to(tree))
        for old, new in replacements.items():
            relative = relative.replace(old, new)
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        for old, new in replacements.items():
            text = text.replace(old, new)
        destination.write_text(text, encoding="utf-8")


def install_codex(files: list[Path], recorded: str, root: str, env: dict) -> None:
    """A ``$CODEX_HOME`` tree (``sessions/YYYY/MM/DD/rollout-*.jsonl``) as Codex keeps it."""
    _copy_tree(files[0], Path(env["CODEX_HOME"]), {recorded: root})


def install_gemini(files: list[Path], recorded: str, root: str, env: dict) -> None:
    """A ``$GEMINI_CLI_HOME`` tree (``.gemini/tmp/<project>/chats/``) as Gemini CLI keeps it."""
    import hashlib

    digest = hashlib.sha256(root.encode()).hexdigest()
    _copy_tree(files[0], Path(env["GEMINI_CLI_HOME"]), {recorded: root, "__PROJECT_HASH__": digest})


def install_aider(files: list[Path], recorded: str, root: str, env: dict) -> None:
    """Aider's ``.aider.chat.history.md``, which Aider writes in the project itself."""
    _copy_tree(files[0], Path(root), {recorded: root})


INSTALLERS = {
    "claude-code": install_claude,
    "pi": install_pi,
    "opencode": install_opencode,
    "codex": install_codex,
    "gemini": install_gemini,
    "aider": install_aider,
}
"""How each harness's sessions are put in place."""

TREES = ("codex", "gemini", "aider")
"""Harnesses whose eval sessions are folders laid out as the harness keeps them."""


def install(harness: str, files: list[Path], root: str, env: dict) -> str:
    """Install ``files`` of ``harness`` for the project at ``root``; the folder they named."""
    recorded = recorded_root(harness, files)
    INSTALLERS[harness](files, recorded, root, env)
    return recorded
