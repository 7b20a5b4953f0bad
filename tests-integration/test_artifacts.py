"""Each built wheel and sdist is what we mean to upload: metadata, contents, entry points."""

from __future__ import annotations

import ast
import os
import re
import tomllib
from pathlib import PurePosixPath

import pytest
from karni_it.artifacts import Artifact
from karni_it.workspace import DISTRIBUTIONS, ROOT
from packaging.requirements import Requirement
from packaging.version import Version

NAMES = sorted(DISTRIBUTIONS)


def _released_mode() -> bool:
    """``KARNI_IT_DIST`` given: artifacts may come from released tags, not this tree."""
    return bool(os.environ.get("KARNI_IT_DIST"))


DOCUMENTED_ENTRY_POINTS: dict[str, dict[str, dict[str, str]]] = {
    "karni-core": {},
    # `karni` is a wheel script: see test_the_karni_command_is_a_wheel_script
    "karni-cli": {"karni.settings": {"karni-cli": "karni.cli.config.declared:SETTINGS"}},
    "karni-history-chronicle": {
        "karni.history_providers": {
            "gigai-chronicle": "karni.agent.history_chronicle:ChronicleProvider"
        }
    },
    "karni-history-adr": {
        "console_scripts": {"karni-history-adr": "karni_history_adr.cli:main"},
        "karni.history_providers": {"adr": "karni_history_adr.provider:AdrProvider"},
    },
    "karni-historian": {
        "console_scripts": {"karni-historian": "karni_historian.cli:main"},
        "karni.history_providers": {
            "historian": "karni_historian.brief.provider:HistorianProvider"
        },
        "karni.settings": {"karni-historian": "karni_historian.declared_settings:SETTINGS"},
    },
    "karni-provider-testkit": {
        "console_scripts": {"fake-chronicle": "karni_provider_testkit.fake_chronicle:main"},
        "pytest11": {"karni_provider_testkit": "karni_provider_testkit.plugin"},
    },
}
"""The entry points the issues promise users, per distribution (names are public API)."""

FORBIDDEN_PARTS = {
    "tests",
    "test",
    "__pycache__",
    "__snapshots__",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
    ".venv",
    ".karni",
    "dist",
}
FORBIDDEN_FILE = re.compile(r"^(test_.*\.py|.*_test\.py|conftest\.py|.*\.py[co]|\.DS_Store)$")

ACCEPTED_METADATA_VERSIONS = {"2.1", "2.2", "2.3", "2.4", "2.5"}
"""2.5 (hatchling >= 1.32) needs an uploader with Twine 7 (gotcha G6); see test below."""


@pytest.fixture(params=NAMES)
def artifact(request: pytest.FixtureRequest, artifacts: dict[str, Artifact]) -> Artifact:
    return artifacts[request.param]


def test_every_workspace_package_was_built(artifacts: dict[str, Artifact]) -> None:
    assert sorted(artifacts) == NAMES
    assert set(DOCUMENTED_ENTRY_POINTS) == set(NAMES), "document the new package's entry points"


def test_file_names_carry_name_and_version(artifact: Artifact) -> None:
    stem = f"{artifact.name.replace('-', '_')}-{artifact.version}"
    assert artifact.wheel.name == f"{stem}-py3-none-any.whl"
    assert artifact.sdist.name == f"{stem}.tar.gz"


def test_metadata_matches_the_source(artifact: Artifact) -> None:
    project = artifact.pyproject["project"]
    meta = artifact.metadata
    assert meta["Name"] == project["name"] == artifact.name
    assert meta["Version"] == project["version"]
    assert meta["Metadata-Version"] in ACCEPTED_METADATA_VERSIONS
    assert meta["Requires-Python"] == project["requires-python"] == ">=3.11"
    declared = list(project.get("dependencies", []))
    for extra, requirements in project.get("optional-dependencies", {}).items():
        declared += [f'{requirement}; extra == "{extra}"' for requirement in requirements]
    assert sorted(map(str, map(Requirement, meta.get_all("Requires-Dist") or []))) == sorted(
        map(str, map(Requirement, declared))
    )
    assert sorted(meta.get_all("Provides-Extra") or []) == sorted(
        project.get("optional-dependencies", {})
    )


def test_version_is_the_one_in_the_tree(artifact: Artifact) -> None:
    if _released_mode():
        pytest.skip("KARNI_IT_DIST given: siblings may be released versions, not the tree's")
    pyproject = DISTRIBUTIONS[artifact.name] / "pyproject.toml"
    assert artifact.version == tomllib.loads(pyproject.read_text())["project"]["version"]


def test_sibling_ranges_are_bounded_and_admit_the_built_sibling(
    artifact: Artifact, artifacts: dict[str, Artifact]
) -> None:
    for line in artifact.metadata.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        if requirement.name not in artifacts:
            continue
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators and "<" in operators, (
            f"{artifact.name}: `{line}` needs a floor and a cap (`>=X,<Y`), never a pin"
        )
        assert not operators & {"==", "==="}, f"{artifact.name}: `{line}` pins a sibling"
        sibling = Version(artifacts[requirement.name].version)
        assert requirement.specifier.contains(sibling), (
            f"{artifact.name} requires `{line}`, which does not admit the built "
            f"{requirement.name} {sibling} (gotcha G1)"
        )


def test_entry_points_are_the_documented_ones(artifact: Artifact) -> None:
    assert artifact.entry_points == DOCUMENTED_ENTRY_POINTS[artifact.name]
    project = artifact.pyproject["project"]
    declared = dict(project.get("entry-points", {}))
    if project.get("scripts"):
        declared["console_scripts"] = project["scripts"]
    assert artifact.entry_points == declared


def test_the_karni_command_is_a_wheel_script(artifacts: dict[str, Artifact]) -> None:
    """Installers rewrite its `#!python` line; no launcher of theirs imports `re`."""
    cli = artifacts["karni-cli"]
    member = f"karni_cli-{cli.version}.data/scripts/karni"
    assert member in cli.wheel_names
    script = cli.wheel_bytes(member).decode("utf-8")
    assert script.startswith("#!python\n")
    assert "from karni.cli.main import console" in script and "console()" in script
    assert "import re" not in script


def _defines(source: str, attribute: str) -> bool:
    """Does the module ``source`` bind ``attribute`` at top level (def, class, =, import)?

    A module-level ``__getattr__`` (PEP 562, a lazily importing package) may
    provide any name; such entry points are loaded for real by
    ``test_install_matrix.py::test_each_distribution_works_installed_alone``.
    """
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                names.update(e.id for e in elements if isinstance(e, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return attribute in names or "__getattr__" in names


def test_entry_points_resolve_inside_the_wheel(artifact: Artifact) -> None:
    for group, points in artifact.entry_points.items():
        for name, value in points.items():
            module, _, attribute = value.partition(":")
            base = module.replace(".", "/")
            candidates = [f"{base}.py", f"{base}/__init__.py"]
            found = [c for c in candidates if c in artifact.wheel_names]
            assert found, f"{artifact.name}: [{group}] {name} = {value}: no {candidates[0]}"
            if attribute:
                source = artifact.wheel_bytes(found[0]).decode("utf-8")
                assert _defines(source, attribute.split(".")[0]), (
                    f"{artifact.name}: [{group}] {name} = {value}: {found[0]} has no {attribute}"
                )


def _top_packages(artifact: Artifact) -> set[str]:
    """The import packages the wheel ships, e.g. ``karni/cli`` or ``karni_history_adr``."""
    packages = set()
    for name in artifact.wheel_names:
        if name.endswith("/__init__.py") and ".dist-info/" not in name:
            path = name.removesuffix("/__init__.py")
            parent = str(PurePosixPath(path).parent)
            if f"{parent}/__init__.py" not in artifact.wheel_names:
                packages.add(path)
    return packages


def test_every_package_is_typed(artifact: Artifact) -> None:
    packages = _top_packages(artifact)
    assert packages, f"{artifact.name}: the wheel holds no package"
    for package in packages:
        assert f"{package}/py.typed" in artifact.wheel_names, f"{package}: no py.typed"
    assert "Typing :: Typed" in artifact.metadata.get_all("Classifier")


def test_licence_is_declared_and_shipped(artifact: Artifact) -> None:
    meta = artifact.metadata
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    dist_info = f"{artifact.name.replace('-', '_')}-{artifact.version}.dist-info"
    licence = artifact.wheel_bytes(f"{dist_info}/licenses/LICENSE")
    assert licence.startswith(b"MIT License")
    assert artifact.sdist_files["LICENSE"] == licence


def test_readme_is_the_long_description(artifact: Artifact) -> None:
    meta = artifact.metadata
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = artifact.sdist_files["README.md"].decode("utf-8")
    assert meta.get_payload() == readme
    if not _released_mode():
        assert readme == (DISTRIBUTIONS[artifact.name] / "README.md").read_text(encoding="utf-8")


def _offending(names: list[str]) -> list[str]:
    bad = []
    for name in names:
        parts = PurePosixPath(name).parts
        if FORBIDDEN_PARTS & set(parts[:-1]) or FORBIDDEN_FILE.match(parts[-1]):
            bad.append(name)
    return bad


def test_no_tests_or_caches_inside(artifact: Artifact) -> None:
    assert _offending(artifact.wheel_names) == []
    assert _offending(artifact.sdist_names) == []


def test_sdist_holds_what_a_rebuild_needs(artifact: Artifact) -> None:
    names = set(artifact.sdist_names)
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "PKG-INFO"} <= names
    changelog = artifact.sdist_files["CHANGELOG.md"].decode("utf-8")
    assert "## [Unreleased]" in changelog


@pytest.mark.parametrize("namespace", ["karni/__init__.py", "karni/agent/__init__.py"])
def test_namespace_packages_stay_implicit(artifacts: dict[str, Artifact], namespace: str) -> None:
    for artifact in artifacts.values():
        assert namespace not in artifact.wheel_names, f"{artifact.name} ships {namespace}"
        assert f"src/{namespace}" not in artifact.sdist_names, f"{artifact.name} sdist"


def test_karni_namespace_is_shared_without_clashes(artifacts: dict[str, Artifact]) -> None:
    owners: dict[str, str] = {}
    for artifact in artifacts.values():
        for name in artifact.wheel_names:
            if ".dist-info/" in name:
                continue
            assert name not in owners, (
                f"{name} is shipped by {owners.get(name)} and {artifact.name}"
            )
            owners[name] = artifact.name
    assert owners["karni/agent/history/__init__.py"] == "karni-core"
    assert owners["karni/cli/__init__.py"] == "karni-cli"
    assert owners["karni/agent/history_chronicle/__init__.py"] == "karni-history-chronicle"


def test_metadata_version_matches_the_uploader() -> None:
    """Metadata 2.5 (hatchling >= 1.32) is rejected by Twine < 7 (gotcha G6).

    The release workflow must publish with gh-action-pypi-publish >= v1.14.2,
    the first release that bundles Twine 7.
    """
    workflow = (ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8")
    match = re.search(r"pypa/gh-action-pypi-publish@v(\d+)\.(\d+)\.(\d+)", workflow)
    assert match, "release.yml must pin pypa/gh-action-pypi-publish to a vX.Y.Z tag"
    assert tuple(map(int, match.groups())) >= (1, 14, 2)


REPOSITORY_URL = "https://github.com/karni-dev/karni-history"


def _site_url() -> str:
    """``site_url`` of mkdocs.yml (read by hand: the file holds MkDocs-only YAML tags)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    (url,) = re.findall(r"^site_url: (\S+)$", text, re.MULTILINE)
    return url


def _project_urls(artifact: Artifact) -> dict[str, str]:
    urls = {}
    for line in artifact.metadata.get_all("Project-URL") or []:
        label, _, url = line.partition(", ")
        urls[label] = url
    return urls


def test_metadata_names_documentation_source_changelog_and_issues(artifact: Artifact) -> None:
    """PyPI's sidebar: each URL leads to this package's page, source and changelog."""
    urls = _project_urls(artifact)
    site = _site_url()
    assert set(urls) >= {"Homepage", "Documentation", "Source", "Changelog", "Issues"}, urls
    assert urls["Homepage"] == site
    page = urls["Documentation"].removeprefix(site)
    assert page != urls["Documentation"], f"{artifact.name}: Documentation is not on {site}"
    assert (ROOT / "docs" / f"{page.rstrip('/')}.md").is_file(), f"no docs page for {page}"
    package = DISTRIBUTIONS[artifact.name].relative_to(ROOT).as_posix()
    assert urls["Source"] == f"{REPOSITORY_URL}/tree/main/{package}"
    assert urls["Changelog"] == f"{REPOSITORY_URL}/blob/main/{package}/CHANGELOG.md"
    assert urls["Issues"] == f"{REPOSITORY_URL}/issues"


def test_the_cli_wheel_carries_the_example_project_byte_for_byte(
    artifacts: dict[str, Artifact],
) -> None:
    """``karni new NAME --example`` copies what the wheel carries: examples/eventsite itself."""
    if _released_mode():
        pytest.skip("KARNI_IT_DIST given: a released wheel carries the example of its tag")
    wheel = artifacts["karni-cli"]
    folder = "karni/cli/templates/example/"
    carried = {}
    for name in wheel.wheel_names:
        if name.startswith(folder) and not name.endswith("/"):
            assert name.endswith(".tmpl"), name
            parts = name[len(folder) : -len(".tmpl")].split("/")
            decoded = "/".join("." + p[4:] if p.startswith("dot-") else p for p in parts)
            carried[decoded] = wheel.wheel_bytes(name)
    example = ROOT / "examples" / "eventsite"
    tracked = {
        path.relative_to(example).as_posix(): path.read_bytes()
        for path in example.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and ".karni" not in path.parts
    }
    assert carried == tracked
    in_sdist = {
        name.removeprefix("examples/eventsite/"): data
        for name, data in wheel.sdist_files.items()
        if name.startswith("examples/eventsite/")
    }
    assert in_sdist == tracked


def _modules_of(artifact: Artifact) -> set[str]:
    """The dotted names of every module and package the wheel ships."""
    modules = set()
    for name in artifact.wheel_names:
        if name.endswith(".py") and ".dist-info/" not in name and ".data/" not in name:
            path = name.removesuffix(".py").removesuffix("/__init__")
            modules.add(path.replace("/", "."))
    return modules


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> set[str]:
    """The absolute modules ``tree`` imports anywhere (functions too), not under TYPE_CHECKING."""
    found: set[str] = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        if isinstance(node, ast.If) and _is_type_checking(node):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))
    return found


def _owner(module: str, shipped: dict[str, set[str]]) -> str | None:
    """The workspace distribution that ships ``module``, or None."""
    for name, modules in shipped.items():
        if module in modules:
            return name
    return None


def test_every_import_comes_from_a_declared_distribution(
    artifact: Artifact, artifacts: dict[str, Artifact]
) -> None:
    """A module imported anywhere in the wheel's code, inside functions too, is the
    wheel's own, the standard library's, or a declared requirement's (extras count):
    otherwise the distribution installed alone fails at the first call that reaches it."""
    import sys
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    declared = {
        canonicalize_name(Requirement(line).name)
        for line in artifact.metadata.get_all("Requires-Dist") or []
    }
    shipped = {name: _modules_of(other) for name, other in artifacts.items()}
    third_party = packages_distributions()
    undeclared = set()
    for member in artifact.wheel_names:
        if not member.endswith(".py") or ".dist-info/" in member:
            continue
        for module in _imports(ast.parse(artifact.wheel_bytes(member))):
            top = module.partition(".")[0]
            owner = _owner(module, shipped)
            if owner == artifact.name or (owner is None and top in sys.stdlib_module_names):
                continue
            owners = [owner] if owner else third_party.get(top, [top])
            if not {canonicalize_name(dist) for dist in owners} & declared:
                undeclared.add(f"{module} (in {member}; from {', '.join(sorted(owners))})")
    assert not undeclared, (
        f"{artifact.name} imports from distributions its pyproject.toml does not require; "
        f"add them to [project] dependencies: {sorted(undeclared)}"
    )
