"""`karni new NAME`: the scaffold, its refusals, and that Karni works inside it at once."""

from __future__ import annotations

import _ast
import os
import stat
import tomllib
from pathlib import Path

import pytest
from karni.cli.inventory.report import EMPTY_INVENTORY
from karni.cli.main import main


@pytest.fixture(autouse=True)
def in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run in an empty folder; conftest's isolated_env already removes providers and CI."""
    monkeypatch.chdir(tmp_path)


def karni(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def entries(folder: Path) -> list[str]:
    """The folder's entries."""
    return sorted(os.listdir(folder))


def tree(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


def test_scaffold(tmp_path: Path, capsys, snapshot_text) -> None:
    code, out, err = karni(capsys, "new", "shop")
    assert (code, err) == (0, "")
    assert out == "created shop/ (19 files)\nnext: cd shop && karni context && karni rules\n"
    root = tmp_path / "shop"
    parts = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        mode = stat.S_IMODE(path.stat().st_mode) & 0o111
        parts.append(f"==> {path.relative_to(root).as_posix()} ({'x' if mode else '-'}) <==\n")
        parts.append(path.read_text(encoding="utf-8"))
    assert "".join(parts) == snapshot_text
    assert entries(tmp_path) == ["shop"]  # no staging folder left


def test_layout_and_settings(tmp_path: Path, capsys) -> None:
    assert karni(capsys, "new", "shop")[0] == 0
    root = tmp_path / "shop"
    for folder in ("config", "apps", "frontend/src/pages", ".karni"):
        assert (root / folder).is_dir(), folder
    assert not (root / ".karni/local").exists()
    assert os.access(root / "manage.py", os.X_OK)
    assert ".karni/local/" in (root / ".gitignore").read_text().splitlines()
    config = tomllib.loads((root / ".karni/config.toml").read_text())
    assert config in ({}, {"suggest_tools": True})

    source = (root / "config/settings.py").read_text()
    module = compile(source, "settings.py", "exec", _ast.PyCF_ONLY_AST)
    (apps,) = [
        node.value
        for node in module.body
        if isinstance(node, _ast.Assign) and getattr(node.targets[0], "id", "") == "INSTALLED_APPS"
    ]
    marker = 1 + source.splitlines().index("    # karni:apps")
    assert apps.elts[-1].lineno < marker < apps.end_lineno
    for name in ("manage.py", "config/settings.py", "config/urls.py", "config/wsgi.py"):
        compile((root / name).read_text(), name, "exec")


def test_karni_works_inside_at_once(tmp_path: Path, capsys, monkeypatch) -> None:
    assert karni(capsys, "new", "shop")[0] == 0
    monkeypatch.chdir(tmp_path / "shop")
    assert karni(capsys, "rules", "sync", "--check") == (0, "adapters are up to date\n", "")
    code, out, err = karni(capsys, "rules")
    assert (code, err) == (0, "") and out.startswith("Rules of this Karni project.")
    code, out, err = karni(capsys, "context")
    assert (code, err) == (0, "")
    assert out == EMPTY_INVENTORY + "\n"  # the next command `karni new` names is never silent
    assert not (tmp_path / "shop/.karni/local").exists()


def test_a_plain_django_project_is_never_silent(tmp_path: Path, run_cli) -> None:
    """The layout ``django-admin startproject mysite`` writes, with no app of its own yet."""
    root = tmp_path / "mysite"
    (root / "mysite").mkdir(parents=True)
    (root / "manage.py").write_text(
        "import os\nimport sys\n\n\ndef main():\n"
        "    os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings')\n"
        "    from django.core.management import execute_from_command_line\n\n"
        "    execute_from_command_line(sys.argv)\n"
    )
    for name in ("__init__.py", "asgi.py", "wsgi.py"):
        (root / "mysite" / name).write_text("")
    (root / "mysite/urls.py").write_text(
        "from django.contrib import admin\nfrom django.urls import path\n\n"
        "urlpatterns = [path('admin/', admin.site.urls)]\n"
    )
    (root / "mysite/settings.py").write_text(
        "INSTALLED_APPS = [\n    'django.contrib.admin',\n    'django.contrib.auth',\n"
        "    'django.contrib.contenttypes',\n]\nROOT_URLCONF = 'mysite.urls'\n"
    )
    result = run_cli("context", cwd=root)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == EMPTY_INVENTORY + "\n"


def test_a_new_app_at_the_marker_shows_in_context(tmp_path: Path, capsys, monkeypatch) -> None:
    assert karni(capsys, "new", "shop")[0] == 0
    root = tmp_path / "shop"
    (root / "apps/events").mkdir()
    (root / "apps/events/__init__.py").write_text("")
    (root / "apps/events/models.py").write_text("")
    settings = root / "config/settings.py"
    settings.write_text(
        settings.read_text().replace("    # karni:apps", '    "apps.events",\n    # karni:apps')
    )
    monkeypatch.chdir(root)
    code, out, _ = karni(capsys, "context")
    assert code == 0
    assert "APPS: events(apps/events/)" in out


def test_end_to_end_in_a_subprocess(tmp_path: Path, run_cli) -> None:
    made = run_cli("new", "shop", cwd=tmp_path)
    assert (made.returncode, made.stderr) == (0, "")
    assert made.stdout.startswith("created shop/ (19 files)\n")
    root = tmp_path / "shop"
    for argv in (("context",), ("rules",), ("rules", "sync", "--check")):
        done = run_cli(*argv, cwd=root)
        assert (done.returncode, done.stderr) == (0, ""), argv
    assert not (root / ".karni/local").exists()
    again = run_cli("new", "shop", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (1, "")


def test_refuses_a_non_empty_folder_and_writes_nothing(tmp_path: Path, capsys) -> None:
    target = tmp_path / "shop"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    code, out, err = karni(capsys, "new", "shop")
    assert (code, out) == (1, "")
    assert err == (
        "karni: shop is not empty; `karni new` only creates a project in a new or empty "
        "folder, so choose another name or empty it\n"
    )
    assert tree(target) == ["notes.txt"]
    assert entries(tmp_path) == ["shop"]


def test_refuses_a_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "shop").write_text("")
    code, out, err = karni(capsys, "new", "shop")
    assert (code, out) == (1, "")
    assert err == "karni: shop exists and is not a folder; choose a new folder name\n"


@pytest.mark.parametrize("target", ["empty folder", "missing"])
def test_refuses_a_symlink_even_to_an_empty_folder(tmp_path: Path, capsys, target: str) -> None:
    outside = tmp_path / "outside"
    if target == "empty folder":
        outside.mkdir()
    (tmp_path / "shop").symlink_to(outside)
    code, out, err = karni(capsys, "new", "shop")
    assert (code, out) == (1, "")
    assert err == (
        "karni: shop is a symlink; Karni does not write through symlinks, "
        "so choose a new folder name\n"
    )
    assert not outside.exists() or list(outside.iterdir()) == []


def test_fills_an_existing_empty_folder(tmp_path: Path, capsys, monkeypatch) -> None:
    (tmp_path / "shop").mkdir()
    assert karni(capsys, "new", "shop")[0] == 0
    assert "manage.py" in os.listdir(tmp_path / "shop")
    assert not [name for name in os.listdir(tmp_path / "shop") if "karni-new" in name]

    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    code, out, err = karni(capsys, "new", ".")
    assert (code, err) == (0, "")
    assert out == "created ./ (19 files)\nnext: karni context && karni rules\n"
    assert (tmp_path / "here/karni.rules.py").is_file()


def test_missing_parent_and_bad_names(tmp_path: Path, capsys) -> None:
    code, _, err = karni(capsys, "new", "missing/shop")
    assert code == 1
    missing = tmp_path / "missing"
    assert err == f"karni: folder {missing} does not exist; create it first or pick another place\n"
    code, _, err = karni(capsys, "new", "my shop")
    assert code == 1
    assert err.startswith("karni: cannot name a project `my shop`: ")
    assert entries(tmp_path) == []


@pytest.mark.parametrize("argv", [[], ["a", "b"], ["--force", "shop"]])
def test_usage_errors(tmp_path: Path, capsys, argv: list[str]) -> None:
    code, out, err = karni(capsys, "new", *argv)
    assert (code, out) == (2, "")
    assert err.startswith("karni: ") and err.count("\n") == 1


def test_a_failure_midway_leaves_nothing(tmp_path: Path, capsys, monkeypatch) -> None:
    from karni.cli.rules import adapters

    def broken_sync(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(adapters, "sync", broken_sync)
    code, out, err = karni(capsys, "new", "shop")
    assert (code, out) == (1, "")
    assert err == "karni: could not create shop (No space left on device); nothing was written\n"
    assert entries(tmp_path) == []

    (tmp_path / "empty").mkdir()
    assert karni(capsys, "new", "empty")[0] == 1
    assert os.listdir(tmp_path / "empty") == []


def test_help(capsys) -> None:
    code, out, _ = karni(capsys, "new", "--help")
    assert code == 0 and out.startswith("usage: karni new NAME")


def files_of(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and ".karni" not in path.parts
    }


def test_example_is_the_bundled_example_project(tmp_path: Path, capsys, monkeypatch) -> None:
    from .conftest import EXAMPLE

    code, out, err = karni(capsys, "new", "site", "--example")
    assert (code, err) == (0, "")
    expected = files_of(EXAMPLE)
    assert out == (
        f"created site/ ({len(expected)} files)\n"
        "next: cd site && karni context --with-history apps/events/models.py && karni rules\n"
    )
    root = tmp_path / "site"
    assert files_of(root) == expected
    assert os.access(root / "manage.py", os.X_OK)
    monkeypatch.chdir(root)
    assert karni(capsys, "rules", "sync", "--check") == (0, "adapters are up to date\n", "")
    code, out, _ = karni(capsys, "context")
    assert code == 0 and "MODELS: Venue(name,address,capacity) Event(" in out


def test_example_with_the_adr_provider_shows_a_brief(tmp_path: Path, run_cli) -> None:
    made = run_cli("new", "--example", "site", cwd=tmp_path)
    assert (made.returncode, made.stderr) == (0, "")
    done = run_cli(
        "context",
        "--with-history",
        "apps/events/models.py",
        cwd=tmp_path / "site",
        env={"KARNI_HISTORY_PROVIDERS": "adr"},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "HISTORY: apps/events/models.py (adr)\n" in done.stdout
    assert "- ADR 2: Hard-delete events with ON DELETE CASCADE (superseded by ADR 4" in done.stdout


def test_example_refuses_a_non_empty_folder(tmp_path: Path, capsys) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "notes.txt").write_text("mine\n")
    code, out, err = karni(capsys, "new", "site", "--example")
    assert (code, out) == (1, "")
    assert err.startswith("karni: site is not empty; ")
    assert tree(tmp_path / "site") == ["notes.txt"]


def test_a_missing_example_is_a_clear_error(tmp_path: Path, capsys, monkeypatch) -> None:
    from karni.cli import scaffold

    monkeypatch.setattr(scaffold, "EXAMPLE_DIR", str(tmp_path / "gone"))
    monkeypatch.setattr(scaffold, "_CHECKOUT_EXAMPLE", str(tmp_path / "gone"))
    code, out, err = karni(capsys, "new", "site", "--example")
    assert (code, out) == (1, "")
    assert err == (
        f"karni: this karni-cli has no example project ({tmp_path / 'gone'} is missing); "
        "reinstall it, e.g. `pipx reinstall karni-cli`\n"
    )
    assert entries(tmp_path) == []
