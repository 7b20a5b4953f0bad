"""The eval sessions of issue 42 (``eval/sessions/``) are read cleanly by a plain ingest.

The eval itself (does each brief tell what ``eval/labels/`` asks?) runs
elsewhere; here each session is installed where its harness keeps it, read
twice, and must record every file its label file names as edited, and give
each a "what shaped this file" line.
"""

import hashlib
import os
import tomllib
from pathlib import Path

import pytest
from karni_historian.cli import main
from karni_historian.ingest import ingest
from karni_historian.store import Store

EVAL = Path(__file__).resolve().parents[3] / "eval"
pytestmark = pytest.mark.skipif(not EVAL.is_dir(), reason="the eval folder is not in this tree")


@pytest.fixture
def project(tmp_path, monkeypatch, user_folders):
    root = tmp_path / "project"
    root.mkdir()
    (root / "manage.py").write_text("")
    monkeypatch.chdir(root)
    return root


def install(harness: str, root: Path) -> None:
    places = {
        "codex": Path(os.environ["CODEX_HOME"]),
        "gemini": Path(os.environ["GEMINI_CLI_HOME"]),
        "aider": root,
    }
    digest = hashlib.sha256(str(root).encode()).hexdigest()
    source = EVAL / "sessions" / harness
    for path in source.rglob("*"):
        if path.is_file():
            target = places[harness] / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8")
            text = text.replace("__PROJECT_HASH__", digest).replace("__PROJECT__", str(root))
            target.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("labels", sorted(EVAL.glob("labels/*.toml")), ids=lambda p: p.stem)
def test_an_eval_session_is_read_cleanly(project, labels, capsys):
    spec = tomllib.loads(labels.read_text(encoding="utf-8"))
    install(spec["harness"], project)
    with Store.open(project, create=True) as store:
        first = ingest(store, project)
        assert (first.malformed, first.warnings()) == (0, [])
        assert ingest(store, project).messages_added == 0
        sessions = store.sessions()
        assert [s.source for s in sessions] == [spec["harness"]]
        edited = {
            row[0]
            for row in store.connection.execute(
                "SELECT path FROM message_files WHERE action IN ('edit', 'create')"
            )
        }
    assert set(spec["files"]) <= edited
    for path, labelled in spec["files"].items():
        assert len(labelled["items"]) >= 5
        capsys.readouterr()
        assert main(["brief", path]) == 0
        assert "What shaped this file" in capsys.readouterr().out
