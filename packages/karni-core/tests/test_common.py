"""The shared modules of karni.agent.common: each behaviour every package relies on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from karni.agent.common import cache, ci, config, files, names, ownership, paths, root
from karni.agent.common.errors import (
    ConfigFileError,
    FileTooLargeError,
    KarniCoreError,
    UnsafePathError,
)
from karni.agent.history import HistoryError


def test_every_core_error_shares_one_root() -> None:
    assert issubclass(HistoryError, KarniCoreError)
    assert issubclass(ConfigFileError, KarniCoreError)
    assert issubclass(UnsafePathError, OSError) and issubclass(UnsafePathError, KarniCoreError)


# --- root -------------------------------------------------------------------------------------


@pytest.mark.parametrize("marker", root.PROJECT_MARKERS)
def test_the_nearest_marker_wins(tmp_path: Path, marker: str) -> None:
    (tmp_path / "manage.py").write_text("")
    inner = tmp_path / "sub"
    (inner / "deep").mkdir(parents=True)
    (inner / marker).write_text("")
    assert root.find_project_root(inner / "deep") == str(inner)
    assert root.find_project_root(tmp_path) == str(tmp_path)


def _nearest_marked_ancestor(path: Path) -> str | None:
    for parent in path.parents:
        if any((parent / marker).is_file() for marker in root.PROJECT_MARKERS):
            return str(parent)
    return None


def test_a_folder_named_like_a_marker_is_no_marker(tmp_path: Path) -> None:
    (tmp_path / "manage.py").mkdir()
    assert root.find_project_root(tmp_path) == _nearest_marked_ancestor(tmp_path)


def test_without_a_marker_up_to_the_top_there_is_no_project(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert root.find_project_root(tmp_path / "a" / "b") == _nearest_marked_ancestor(tmp_path)
    assert _nearest_marked_ancestor(tmp_path) is None  # the temporary folder is not in a project


def test_local_dir(tmp_path: Path) -> None:
    assert root.local_dir(tmp_path) == os.path.join(str(tmp_path), ".karni", "local")


# --- config -----------------------------------------------------------------------------------


def test_a_relative_xdg_config_home_is_ignored(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")
    assert config.user_config_path() == str(tmp_path / ".config" / "karni" / "config.toml")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config.user_config_path() == str(tmp_path / "xdg" / "karni" / "config.toml")


def test_cache_dir_follows_the_same_rule(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KARNI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert config.cache_dir() == str(tmp_path / ".cache" / "karni")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert config.cache_dir() == str(tmp_path / "c" / "karni")
    monkeypatch.setenv("KARNI_CACHE_DIR", "")
    assert config.cache_dir() is None
    monkeypatch.setenv("KARNI_CACHE_DIR", str(tmp_path / "k"))
    assert config.cache_dir() == str(tmp_path / "k")
    assert config.cache_dir is cache.cache_dir  # where caches live is the cache module's


@pytest.fixture
def layered(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "karni" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[historian]\nexpand_tools = { a = "x" }\ncontext_limit = 1000\nuser = 1\n')
    project = tmp_path / "project"
    (project / ".karni").mkdir(parents=True)
    (project / ".karni" / "config.toml").write_text("[historian]\ncontext_limit = 2000\n")
    return project


def test_the_project_wins_over_the_user_key_by_key(layered: Path) -> None:
    merged = config.merged_table(layered, "historian")
    assert merged == {"expand_tools": {"a": "x"}, "context_limit": 2000, "user": 1}
    layers = config.config_layers(layered)
    assert [layer.scope for layer in layers] == [config.PROJECT, config.USER]
    assert config.merged_table(None, "historian")["context_limit"] == 1000


def test_missing_files_are_empty(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    assert config.read_config(str(tmp_path / "missing.toml")) == {}
    assert config.merged_table(tmp_path, "historian") == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"x = [", "is not valid TOML ("),
        (b"x = '\xff'", "is not UTF-8 text; save it as UTF-8"),
        (b"historian = 3", "`historian` in "),
    ],
)
def test_bad_files_name_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigFileError) as caught:
        config.table(
            config.ConfigLayer("user", str(path), config.read_config(str(path))), "historian"
        )
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert caught.value.path == str(path)


def test_a_config_that_is_a_folder_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").mkdir()
    with pytest.raises(ConfigFileError, match="is not a regular file; replace it with a TOML file"):
        config.read_config(str(tmp_path / "config.toml"))


def test_crlf_is_kept_by_the_text_reader(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_bytes(b"a = true\r\n")
    assert config.read_config_text(str(tmp_path / "c.toml")) == "a = true\r\n"


# --- files ------------------------------------------------------------------------------------


def test_write_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    files.write_atomic(str(target), "first")
    target.chmod(0o640)
    files.write_atomic(str(target), b"second")
    assert target.read_bytes() == b"second"
    assert target.stat().st_mode & 0o777 == 0o640
    files.write_atomic(str(target), "third", mode=0o600)
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["f.txt"]


def test_write_atomic_refuses_a_symlinked_target(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    (tmp_path / "link.txt").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="is a symlink"):
        files.write_atomic(str(tmp_path / "link.txt"), "overwritten")
    assert outside.read_text() == "precious"
    assert sorted(os.listdir(tmp_path)) == ["link.txt", "outside.txt"]


def test_write_atomic_refuses_a_symlinked_folder_within(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".cursor").symlink_to(elsewhere)
    with pytest.raises(UnsafePathError):
        files.write_atomic(str(project / ".cursor" / "rules" / "x.md"), "x", within=str(project))
    assert list(elsewhere.iterdir()) == []


def test_check_writable_refuses_what_write_atomic_would_and_writes_nothing(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".karni").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".karni" / "config.toml").symlink_to(elsewhere / "secret.toml")
    (project / ".cursor").symlink_to(elsewhere)
    within = str(project)
    for target in (".karni/config.toml", ".cursor/rules/x.md"):
        with pytest.raises(UnsafePathError, match="is a symlink"):
            files.check_writable(str(project / target), within=within)
    with pytest.raises(UnsafePathError, match="lies outside"):
        files.check_writable(str(tmp_path / "x.toml"), within=within)
    files.check_writable(str(project / ".karni" / "new" / "deeper" / "x.toml"), within=within)
    files.check_writable(str(project / "x.toml"), within=within)
    assert sorted(os.listdir(project / ".karni")) == ["config.toml"]
    assert list(elsewhere.iterdir()) == []


def test_leads_inside_follows_every_link(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "a.md").write_text("a")
    (tmp_path / "private.md").write_text("p")
    (project / "docs" / "in.md").symlink_to(project / "docs" / "a.md")
    (project / "docs" / "out.md").symlink_to(tmp_path / "private.md")
    (project / "linked").symlink_to(tmp_path)
    real = os.path.realpath(project / "docs" / "a.md")
    assert paths.leads_inside(project, project / "docs" / "a.md") == real
    assert paths.leads_inside(project, project / "docs" / "in.md") == real
    assert paths.leads_inside(project, project / "docs" / "out.md") is None
    assert paths.leads_inside(project, project / "linked" / "private.md") is None
    # the rule for names keeps a linked file's own path: it is named, never read through
    assert paths.project_relative(project, project / "docs" / "out.md") == "docs/out.md"


def test_write_atomic_creates_folders_within(tmp_path: Path) -> None:
    files.write_atomic(str(tmp_path / "a" / "b" / "c.txt"), "x", within=str(tmp_path))
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "x"
    with pytest.raises(UnsafePathError, match="lies outside"):
        files.make_folders(str(tmp_path.parent / "other"), within=str(tmp_path))


def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space"):
        files.write_atomic(str(target), "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_read_regular_file_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    assert files.read_regular_file(str(path), 5) == b"12345"
    with pytest.raises(FileTooLargeError, match="larger than 4 bytes"):
        files.read_regular_file(str(path), 4)
    with pytest.raises(FileNotFoundError):
        files.read_regular_file(str(tmp_path / "missing"), 5)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_read_regular_file_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UnsafePathError, match="not a regular file"):
        files.read_regular_file(str(tmp_path / "fifo"), 10)


def test_read_regular_file_can_refuse_symlinks(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert files.read_regular_file(str(tmp_path / "link"), 1) == b"x"
    with pytest.raises(UnsafePathError, match="symlink"):
        files.read_regular_file(str(tmp_path / "link"), 1, follow_symlinks=False)


# --- ci, names, ownership ---------------------------------------------------------------------


def test_the_ci_variables() -> None:
    assert set(ci.CI_VARIABLES) == {
        "CI",
        "GITHUB_ACTIONS",
        "GITLAB_CI",
        "BUILDKITE",
        "CIRCLECI",
        "JENKINS_URL",
        "TF_BUILD",
        "TEAMCITY_VERSION",
        "BITBUCKET_BUILD_NUMBER",
        "CODEBUILD_BUILD_ID",
    }
    assert ci.in_ci({"CI": " Off ", "BUILDKITE": ""}) is False
    assert ci.in_ci({"CIRCLECI": "1"}) is True


@pytest.mark.parametrize(
    ("name", "normal"),
    [("Karni_Core", "karni-core"), ("a..b__c", "a-b-c"), ("plain", "plain"), ("-x-", "-x-")],
)
def test_normalize_name(name: str, normal: str) -> None:
    assert names.normalize_name(name) == normal


def test_ownership(tmp_path: Path) -> None:
    assert ownership.owned_by_current_user(tmp_path) is True
    assert ownership.owned_by_current_user(tmp_path / "missing") is False
    if hasattr(os, "getuid") and os.getuid() != 0:
        assert ownership.owned_by_current_user("/") is False


# --- paths ------------------------------------------------------------------------------------


def test_project_relative(tmp_path: Path) -> None:
    (tmp_path / "apps").mkdir()
    assert paths.project_relative(tmp_path, tmp_path / "apps" / "new.py") == "apps/new.py"
    assert paths.project_relative(tmp_path, "apps/x.py", cwd=str(tmp_path)) == "apps/x.py"
    assert paths.project_relative(tmp_path, tmp_path) == "."
    assert paths.project_relative(tmp_path, tmp_path.parent / "other.py") is None


def test_the_one_symlink_rule(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "apps").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "out").symlink_to(outside)  # a folder leading out: not inside
    (project / "apps" / "real.py").write_text("")
    (project / "alias.py").symlink_to(project / "apps" / "real.py")  # a file: its own name
    via = tmp_path / "via"
    via.symlink_to(project)  # the root reached through a link still holds its files
    assert paths.project_relative(project, project / "out" / "x.py") is None
    assert paths.project_relative(project, project / "alias.py") == "alias.py"
    assert paths.project_relative(via, via / "apps" / "real.py") == "apps/real.py"
    assert paths.project_relative(project, via / "apps" / "real.py") == "apps/real.py"


# --- pipes ------------------------------------------------------------------------------------


def test_a_broken_pipe_ends_quietly_with_141() -> None:
    script = (
        "import sys\n"
        "from karni.agent.common.pipes import stop_on_broken_pipe\n"
        "try:\n"
        "    for _ in range(100000):\n"
        "        print('x' * 100)\n"
        "except BrokenPipeError:\n"
        "    sys.exit(stop_on_broken_pipe())\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait() == 141
    assert stderr == b""


def test_the_package_itself_imports_nothing() -> None:
    script = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import karni.agent.common\n"
        "print(sorted(m for m in set(sys.modules) - before if not m.startswith('karni')))\n"
    )
    assert _python(script).strip() == "[]"


def _python(script: str) -> str:
    """What a fresh interpreter running ``script`` prints."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_children_are_found_only_while_this_process_has_some() -> None:
    from karni.agent.common import processes

    if not os.path.isdir("/proc"):
        pytest.skip("no /proc here")
    assert processes._children() == set() or processes._has_children()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert processes._has_children()
        assert child.pid in processes._children()
    finally:
        child.kill()
    assert child.pid in processes._children()  # dying or a zombie: a child, and not reaped
    child.wait()
    assert child.pid not in processes._children()


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("spawn", ["posix_spawn", "no session support", "no posix_spawn"])
def test_run_program_runs_in_cwd_and_leaves_the_process_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawn: str
) -> None:
    from karni.agent.common import processes

    if not os.path.isdir("/proc/self/fd") or not hasattr(os, "posix_spawn"):
        pytest.skip("needs POSIX and /proc")
    if spawn == "no session support":
        real = os.posix_spawn

        def without_sessions(*args, **kwargs):
            if kwargs.get("setsid"):
                raise NotImplementedError("setsid")
            return real(*args, **kwargs)

        monkeypatch.setattr(os, "posix_spawn", without_sessions)
    elif spawn == "no posix_spawn":
        monkeypatch.setattr(processes, "_SPAWN", False)
    here, descriptors = os.getcwd(), _open_descriptors()
    script = "import os, sys; print(os.getcwd()); sys.stdout.flush(); os.write(2, b'hidden')"
    out = processes.run_program(sys.executable, ["-c", script], str(tmp_path), 30)
    assert out == f"{tmp_path}\n".encode()
    failed = processes.run_program(sys.executable, ["-c", "raise SystemExit(3)"], str(tmp_path), 30)
    assert failed is None  # a non-zero exit gives nothing
    assert processes.run_program(sys.executable, ["-c", "pass"], str(tmp_path / "gone"), 30) is None
    assert os.getcwd() == here
    assert _open_descriptors() == descriptors


def _subreaper_flag() -> int:
    """prctl(PR_GET_CHILD_SUBREAPER), asked through ctypes."""
    import ctypes

    flag = ctypes.c_int()
    ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0)
    return flag.value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
@pytest.mark.parametrize("lean", [True, False], ids=["through _ctypes", "through ctypes"])
def test_the_subreaper_is_set_and_cleared_with_or_without_ctypes(
    monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    from karni.agent.common import processes

    assert _subreaper_flag() == 0  # and ctypes is loaded, for the fallback below
    if not lean:
        monkeypatch.setitem(sys.modules, "_ctypes", None)  # `import _ctypes` fails
    assert processes._set_subreaper(True)
    try:
        assert _subreaper_flag() == 1
    finally:
        assert processes._set_subreaper(False)
    assert _subreaper_flag() == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
def test_the_subreaper_does_not_import_ctypes() -> None:
    script = (
        "import sys\n"
        "from karni.agent.common import processes\n"
        "assert processes._set_subreaper(True) and processes._set_subreaper(False)\n"
        "print('ctypes' in sys.modules)\n"
    )
    assert _python(script) == "False\n"
