"""A real-shaped Claude Code session, ingested, condensed and briefed end to end."""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from karni.agent.history import HISTORY_TOKEN_CAP, compose
from karni_historian.brief.provider import HistorianProvider
from karni_historian.cli import main
from karni_historian.ingest.claude_code import project_key

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = "7d3e2a10-5c4b-4f1e-9a2d-3b8c6e1f0a42"


@pytest.fixture
def condensed(tmp_path, monkeypatch, capsys):
    root = tmp_path / "shop-project"
    (root / "shop").mkdir(parents=True)
    (root / "manage.py").write_text("")
    (root / "shop" / "cart.py").write_text("def subtotal(items):\n    return 0\n")
    env = {
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "TZ": "UTC",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    time.tzset()
    folder = tmp_path / "claude" / "projects" / project_key(str(root))
    folder.mkdir(parents=True)
    text = (FIXTURES / "claude_code_session.jsonl").read_text(encoding="utf-8")
    (folder / f"{SESSION}.jsonl").write_text(text.replace("__PROJECT__", str(root)))
    monkeypatch.chdir(root)
    assert main(["ingest"]) == 0
    assert main(["wrapup", "4"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines()[1] == (
        f"session {SESSION}: 4 new compartment(s), 2 fact(s); messages 1-28 condensed; "
        "the newest 4 stay raw"
    )
    yield root, env
    monkeypatch.undo()  # TZ as it was before, then the zone read again
    time.tzset()


def test_render(condensed, capsys, snapshot_text):
    assert main(["render"]) == 0
    out = capsys.readouterr().out
    assert out == snapshot_text
    assert main(["render", "--budget", "120"]) == 0
    tight = capsys.readouterr().out
    assert len(tight) < len(out)
    assert tight.startswith("<session-history>\n")


def test_status(condensed, capsys, snapshot_text):
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    # The run's duration and time differ between runs: the rest is exact.
    masked = re.sub(r"ok in [0-9.]+s at \S+", "ok in Ns at TIME", out)
    assert masked == snapshot_text


def test_status_reports_the_size_of_the_block_render_prints(condensed, capsys):
    from karni_historian.budget import estimate_tokens

    for _ in range(2):  # before the first render (a rebuild pending) and after it
        assert main(["status", "--json"]) == 0
        history = json.loads(capsys.readouterr().out)["history"]
        assert main(["render"]) == 0
        block = capsys.readouterr().out.removesuffix("\n")
        assert block.startswith("<session-history>")
        assert history["tokens"] == estimate_tokens(block)
        assert history["tokens"] <= history["budget"]


def test_full_brief(condensed, capsys, snapshot_text):
    assert main(["brief", "shop/cart.py"]) == 0
    sized = capsys.readouterr().out
    assert sized == snapshot_text
    assert main(["brief", "--all", "shop/cart.py"]) == 0
    assert capsys.readouterr().out == sized  # a small store fits the history budget
    assert main(["brief"]) == 0
    assert capsys.readouterr().out.startswith("Project memory:\n")


def test_expand_after_wrapup(condensed, capsys, snapshot_text):
    assert main(["expand", "23", "28"]) == 0
    assert capsys.readouterr().out == snapshot_text


def test_compose_fits_the_cap(condensed, snapshot_text):
    root, _ = condensed
    brief = compose(root, "shop/cart.py", providers=[HistorianProvider()])
    assert brief == snapshot_text
    assert len(brief) <= HISTORY_TOKEN_CAP * 4
    assert "truncated" not in brief
    assert compose(root, "shop/unknown.py", providers=[HistorianProvider()]) is None
    project = compose(root, None, providers=[HistorianProvider()])
    assert project.startswith("HISTORY: project (historian)\nProject memory:\n")


def karni(root: Path, env: dict[str, str], *args: str, providers: str = "historian") -> str:
    """Run ``python -m karni.cli ARGS`` in ``root`` with only ``providers`` discovered."""
    result = subprocess.run(
        [sys.executable, "-m", "karni.cli", *args],
        cwd=root,
        env={
            **os.environ,
            **env,
            "KARNI_HISTORY_PROVIDERS": providers,
            "KARNI_CACHE_DIR": "",
            "NO_COLOR": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_karni_context_with_history(condensed, snapshot_text):
    root, env = condensed
    out = karni(root, env, "context", "--with-history", "shop/cart.py")
    assert out == snapshot_text
    brief = compose(root, "shop/cart.py", providers=[HistorianProvider()])
    assert out.endswith(brief + "\n")
    assert out.startswith(karni(root, env, "context", providers=""))


def test_karni_doctor_lists_the_provider(condensed):
    root, env = condensed
    facts = json.loads(karni(root, env, "doctor", "--json"))
    [provider] = facts["history"]["providers"]
    assert provider["name"] == "historian"
    assert provider["distribution"] == "karni-historian"
    assert provider["version"] == importlib.metadata.version("karni-historian")
    assert provider["detects_store"] is True
    assert facts["history"]["failures"] == []
    lines = karni(root, env, "doctor", "--quiet").splitlines()
    row = next(line for line in lines if line.strip().startswith("historian "))
    assert row.split() == ["historian", "karni-historian", provider["version"], "store", "detected"]
