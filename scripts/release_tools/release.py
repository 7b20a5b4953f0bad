"""``scripts/release PACKAGE {major|minor|patch}``: prepare one package's release.

Steps, stopping at the first problem with one line naming it and the fix:

1. Refuse a dirty tree, an unknown package, a changelog with nothing under
   ``## [Unreleased]``, a package unchanged since its last tag, or a tag that
   already exists.
2. Bump ``project.version``; refuse if any sibling's range would not admit it.
3. Move the Unreleased entries under ``## [X.Y.Z] - <today, UTC>``.
4. Build only that package (``uv build --package P --no-sources``).
5. Run ``tests-integration`` against the new wheel with its siblings at their
   newest released versions, and again with the siblings it depends on at the
   oldest released versions its ranges allow. A sibling's released versions
   are its ``<dist>-v<version>`` tags, built from the tagged tree; a sibling
   never tagged is built from the current tree (nothing published yet).
6. Print the commands that commit and push the tag ``<dist>-v<version>``.

On any failure after step 2 the version and changelog edits are undone, so
the tree is as it was. The script never commits, tags or pushes.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from release_tools import changelog
from release_tools.builds import BuildError, build
from release_tools.gitrepo import (
    GitError,
    changed_since,
    dirty_paths,
    export,
    released_versions,
)
from release_tools.ranges import range_problems
from release_tools.versions import PARTS, VersionError, admits, bump
from release_tools.workspace import (
    Package,
    WorkspaceError,
    load_workspace,
    set_version_text,
)

ROOT = Path(__file__).resolve().parents[2]


class ReleaseError(Exception):
    """The release cannot go ahead; the message names the problem and the fix."""


def say(message: str) -> None:
    print(f"release: {message}", file=sys.stderr, flush=True)


def write_atomic(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.release-tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def check_preconditions(root: Path, package: Package, new_version: str) -> None:
    dirty = dirty_paths(root)
    if dirty:
        shown = ", ".join(dirty[:5]) + (" …" if len(dirty) > 5 else "")
        raise ReleaseError(f"the working tree is not clean ({shown}); commit or stash first")
    entries = changelog.unreleased_entries(package.changelog.read_text(encoding="utf-8"))
    if not entries:
        raise ReleaseError(
            f"{package.name}: nothing under `## [Unreleased]` in "
            f"{package.changelog.relative_to(root)}; record the changes there first"
        )
    released = released_versions(root, package.tag_prefix)
    if released and not changed_since(root, package.tag_prefix + released[-1], package.folder):
        raise ReleaseError(
            f"{package.name}: nothing changed since {package.tag_prefix}{released[-1]}; "
            f"there is nothing to release"
        )
    if new_version in released:
        raise ReleaseError(f"tag {package.tag_prefix}{new_version} already exists")


def plan_sibling_versions(
    root: Path, packages: dict[str, Package], package: Package
) -> dict[str, dict[str, str | None]]:
    """Combination name → sibling → released version to test with (None: the tree).

    ``newest``: every sibling at its newest release. ``oldest``: the siblings
    ``package`` depends on at the oldest release its range admits.
    """
    newest: dict[str, str | None] = {}
    oldest: dict[str, str | None] = {}
    ranges = dict(package.dependencies)
    for name, sibling in packages.items():
        if name == package.name:
            continue
        released = released_versions(root, sibling.tag_prefix)
        newest[name] = released[-1] if released else None
        oldest[name] = newest[name]
        if name in ranges and released:
            admitted = [v for v in released if admits(ranges[name], v)]
            if not admitted:
                raise ReleaseError(
                    f"{package.name} requires `{name}{ranges[name]}`, which admits no released "
                    f"{name} ({', '.join(released)}); release {name} first"
                )
            oldest[name] = admitted[0]
    plans = {"newest": newest}
    if oldest != newest:
        plans["oldest"] = oldest
    return plans


def assemble(
    root: Path,
    work: Path,
    packages: dict[str, Package],
    package: Package,
    new_files: list[Path],
    plan: dict[str, str | None],
    cache: dict[tuple[str, str | None], list[Path]],
) -> Path:
    """A folder holding the new artifacts and each sibling's artifacts at its planned version."""
    folder = Path(tempfile.mkdtemp(prefix="combo-", dir=work))
    for file in new_files:
        shutil.copy2(file, folder)
    for name, version in plan.items():
        key = (name, version)
        if key not in cache:
            if version is None:
                say(f"building {name} {packages[name].version} from the tree (never released)")
                tree = root
            else:
                say(f"building {name} {version} from tag {packages[name].tag_prefix}{version}")
                tree = work / f"tree-{name}-{version}"
                export(root, packages[name].tag_prefix + version, tree)
            cache[key] = build(tree, name, work / f"dist-{name}-{version or 'tree'}")
        for file in cache[key]:
            shutil.copy2(file, folder)
    return folder


def run_suite(root: Path, folder: Path, label: str, suite_args: list[str]) -> None:
    files = ", ".join(sorted(p.name for p in folder.glob("*.whl")))
    say(f"integration suite ({label}): {files}")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests-integration",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "not release_script",
        *suite_args,
    ]
    env = {**os.environ, "KARNI_IT_DIST": str(folder)}
    # pytest reports on stderr: stdout is kept for the result (the tag to push).
    result = subprocess.run(command, cwd=root, env=env, stdout=sys.stderr, check=False)
    if result.returncode != 0:
        raise ReleaseError(
            f"the integration suite failed with the {label} siblings (exit {result.returncode}); "
            f"fix it, then run the release again"
        )


def prepare(root: Path, name: str, part: str, suite_args: list[str]) -> str:
    """Do steps 1-5 and return the tag to push."""
    packages = load_workspace(root)
    if name not in packages:
        raise ReleaseError(f"unknown package `{name}`; choose one of {', '.join(packages)}")
    package = packages[name]
    new_version = bump(package.version, part)
    check_preconditions(root, package, new_version)
    problems = range_problems(packages, {name: new_version})
    if problems:
        raise ReleaseError(f"{problems[0]}; then release that sibling too")
    plans = plan_sibling_versions(root, packages, package)

    say(f"{name} {package.version} → {new_version}")
    originals = {
        path: path.read_text(encoding="utf-8") for path in (package.pyproject, package.changelog)
    }
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    try:
        write_atomic(package.pyproject, set_version_text(originals[package.pyproject], new_version))
        write_atomic(
            package.changelog, changelog.release(originals[package.changelog], new_version, today)
        )
        with tempfile.TemporaryDirectory(prefix="karni-release-") as temp:
            work = Path(temp)
            new_files = build(root, name, work / "new")
            cache: dict[tuple[str, str | None], list[Path]] = {}
            for label, plan in plans.items():
                folder = assemble(root, work, packages, package, new_files, plan, cache)
                run_suite(root, folder, label, suite_args)
    except BaseException:
        for path, text in originals.items():
            write_atomic(path, text)
        say("undid the version and changelog edits")
        raise
    return f"{package.tag_prefix}{new_version}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/release", description="Prepare one package's release (see docs/releasing.md)."
    )
    parser.add_argument("package", help="distribution name, e.g. karni-core")
    parser.add_argument("part", choices=PARTS, help="which part of the version to bump")
    parser.add_argument(
        "--suite-args",
        default="",
        help="extra pytest arguments for the integration runs, e.g. '-x' (shell-quoted string)",
    )
    args = parser.parse_args(argv)
    try:
        tag = prepare(ROOT, args.package, args.part, shlex.split(args.suite_args))
    except (ReleaseError, WorkspaceError, VersionError, GitError, BuildError) as error:
        print(f"release: {error}", file=sys.stderr)
        return 1
    except changelog.ChangelogError as error:
        print(f"release: {args.package}: CHANGELOG.md: {error}", file=sys.stderr)
        return 1
    version = tag.rsplit("-v", 1)[1]
    print(f"Prepared {args.package} {version}. Review the diff, then commit and push the tag:")
    print(f"  git commit -am {shlex.quote(f'Release {args.package} {version}')}")
    print(f"  git tag {tag}")
    print(f"  git push origin HEAD {tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
