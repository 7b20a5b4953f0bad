"""The inventory on Django projects laid out as real ones are, not as Karni's scaffold.

Each project is written by ``scripts/django_layouts.py`` (made-up names, no
copied code): settings named by ``manage.py`` in ``<pkg>/settings.py`` with
dotted apps, a settings package and django-split-settings, abstract bases with
many fields, a backend/frontend monorepo and a project of about a thousand
Python files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from karni.agent.history import estimate_tokens
from karni.cli.inventory import render
from karni.cli.inventory.report import (
    EMPTY_INVENTORY,
    INVENTORY_CHAR_BUDGET,
    INVENTORY_TOKEN_BUDGET,
    LINE_CAPS,
    inventory_lines,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

from django_layouts import (
    abstract_bases,
    dotted_apps,
    large_project,
    manage_py,
    monorepo,
    settings_package,
    split_settings,
    write_files,
)


def test_settings_named_by_manage_py_with_dotted_apps_and_an_app_config(tmp_path: Path) -> None:
    assert inventory_lines(str(dotted_apps(tmp_path))) == [
        "APPS: probes(beacon/probes/) panel(beacon/panel/) beacon_alerts(beacon/alerts/)",
        "MODELS: Probe(target,interval,timeout,enabled) Result(probe,status_code,latency_ms) "
        "Rule(probe,threshold_ms)",
        "VIEWSETS: ProbeViewSet",
    ]


def test_a_settings_package_star_importing_its_modules(tmp_path: Path) -> None:
    lines = inventory_lines(str(settings_package(tmp_path)))
    assert lines[0] == "APPS: catalog(catalog/) orders(orders/) reviews(reviews/)"
    assert lines[1] == "MODELS: Product(title,price) Order(number) Review(stars)"


def test_split_settings_components_are_followed_in_order(tmp_path: Path) -> None:
    lines = inventory_lines(str(split_settings(tmp_path)))
    assert lines == [
        "APPS: main(server/apps/main/) billing(server/apps/billing/)",
        "MODELS: BlogPost(title,body) Invoice(amount)",
    ]


def test_a_settings_module_manage_py_names_wins_over_config_settings(tmp_path: Path) -> None:
    dotted_apps(tmp_path)
    write_files(tmp_path, {"config/settings.py": 'INSTALLED_APPS = ["beacon.panel"]\n'})
    assert inventory_lines(str(tmp_path))[0].startswith("APPS: probes(beacon/probes/) ")


def test_own_fields_first_and_no_empty_parentheses(tmp_path: Path) -> None:
    lines = inventory_lines(str(abstract_bases(tmp_path)))
    assert lines[1] == (
        "MODELS: Link(cid,carrier,kind,status) Carrier(name,slug,contacts,description) "
        "LinkKind(description,comments,custom_field_data) UserToken"
    )
    assert "()" not in "\n".join(lines)
    assert "last_updated" not in lines[1]


def test_pages_of_a_react_frontend_beside_the_backend(tmp_path: Path) -> None:
    top = monorepo(tmp_path)
    assert inventory_lines(str(top / "backend")) == [
        "APPS: common(common/) users(users/)",
        "MODELS: User(email)",
        "VIEWSETS: UserViewSet",
        "PAGES: Home Settings (../frontend/js/pages/)",
    ]


def test_a_frontend_package_beside_manage_py(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "manage.py": manage_py("site_conf.settings"),
            "site_conf/settings.py": 'INSTALLED_APPS = ["blog"]\n',
            "blog/models.py": "",
            "frontend/package.json": '{"devDependencies": {"react": "19"}}\n',
            "frontend/src/app/pages/Landing.tsx": "",
            "frontend/src/app/pages/Landing.test.tsx": "",
        },
    )
    assert inventory_lines(str(tmp_path))[-1] == "PAGES: Landing (frontend/src/app/pages/)"


def test_no_pages_without_react_or_above_the_repository_top(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "package.json": '{"dependencies": {"react": "19"}}\n',
            "js/pages/Outside.js": "",
            "repo/.git/HEAD": "",
            "repo/package.json": '{"dependencies": {"vue": "3"}}\n',
            "repo/js/pages/Vue.js": "",
            "repo/app/manage.py": "",
        },
    )
    assert inventory_lines(str(tmp_path / "repo" / "app")) == [EMPTY_INVENTORY]


@pytest.mark.parametrize(
    ("files", "note"),
    [
        (
            {"manage.py": manage_py("gone.settings")},
            "APPS: none found (manage.py names the settings module gone.settings, but there is "
            "no gone/settings.py or gone/settings/__init__.py here, and no folder at the top or "
            "in apps/ has apps.py, models.py or models/)",
        ),
        (
            {"manage.py": manage_py("site.settings"), "site/settings.py": "DEBUG = True\n"},
            "APPS: none found (site/settings.py set no INSTALLED_APPS, and no folder at the top "
            "or in apps/ has apps.py, models.py or models/)",
        ),
        (
            {
                "manage.py": manage_py("site.settings"),
                "site/settings.py": 'INSTALLED_APPS = ["site.shop"]\n',
            },
            "APPS: none found (no entry of INSTALLED_APPS in site/settings.py is a folder of this "
            "project, and no folder at the top or in apps/ has apps.py, models.py or models/)",
        ),
    ],
    ids=["missing-module", "no-installed-apps", "no-such-folder"],
)
def test_what_was_looked_for_when_no_app_is_found(
    tmp_path: Path, files: dict[str, str], note: str
) -> None:
    write_files(tmp_path, files)
    assert inventory_lines(str(tmp_path)) == [note]
    assert "startapp" not in note


def test_only_others_apps_listed_means_none_yet(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "manage.py": manage_py("site.settings"),
            "site/settings.py": 'INSTALLED_APPS = ["django.contrib.auth", "rest_framework"]\n',
        },
    )
    assert inventory_lines(str(tmp_path)) == [EMPTY_INVENTORY]


def test_a_project_of_a_thousand_files_stays_within_the_budget(tmp_path: Path) -> None:
    project = large_project(tmp_path)
    assert sum(1 for _ in project.rglob("*.py")) > 950
    text = render(str(project))
    lines = text.splitlines()
    assert [line.split(":", 1)[0] for line in lines] == ["APPS", "MODELS", "VIEWSETS"]
    for line in lines:
        assert len(line) <= LINE_CAPS[line.split(":", 1)[0]], line
    assert len(text) <= INVENTORY_CHAR_BUDGET
    assert estimate_tokens(text) <= INVENTORY_TOKEN_BUDGET
    assert lines[0].endswith(" +2 more")
    assert lines[1].startswith("MODELS: SitesItem00(label,code,owner,status) ")
    assert lines[1].endswith(" more") and lines[2].endswith(" more")
    shown = int(lines[2].split(" +")[1].split()[0]) + len(lines[2].split()) - 3
    assert shown == 241  # 240 viewsets and their base, all counted


def test_line_caps_add_up_to_the_budget() -> None:
    assert sum(LINE_CAPS.values()) + len(LINE_CAPS) <= INVENTORY_CHAR_BUDGET


def test_settings_code_is_never_run_and_links_out_are_not_followed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write_files(
        tmp_path / "project",
        {
            "manage.py": manage_py("site.settings") + f"open({str(marker)!r}, 'w')\n",
            "site/settings/__init__.py": (
                f"open({str(marker)!r}, 'w')\n"
                "from split_settings.tools import include\n"
                "include('../../../outside/*.py', '/etc/*.py', 'parts/*.py')\n"
            ),
            "site/settings/parts/apps.py": 'INSTALLED_APPS = ["shop"]\n',
            "shop/models.py": "",
        },
    )
    write_files(tmp_path, {"outside/evil.py": 'INSTALLED_APPS = ["evil"]\n', "evil/models.py": ""})
    assert inventory_lines(str(tmp_path / "project")) == ["APPS: shop(shop/)"]
    assert not marker.exists()


def test_a_changed_settings_component_is_read_again(tmp_path: Path) -> None:
    split_settings(tmp_path)
    first = render(str(tmp_path))
    component = tmp_path / "server/settings/components/apps.py"
    component.write_text("INSTALLED_APPS += ()\n", encoding="utf-8")
    assert render(str(tmp_path)) != first
    assert "billing" not in render(str(tmp_path))


def test_a_django_project_in_a_subfolder_is_named(tmp_path: Path, run_cli) -> None:
    top = monorepo(tmp_path)
    result = run_cli("context", cwd=top)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"karni: no Karni project at or above {top}: looked for manage.py or karni.rules.py; "
        "manage.py is in backend/: run karni there (`cd backend`)\n"
    )
    doctor = run_cli("doctor", cwd=top)
    assert "manage.py is in backend/: run karni there" in doctor.stdout.splitlines()[0]
    inside = run_cli("context", cwd=top / "backend")
    assert inside.returncode == 0
    assert inside.stdout.endswith("PAGES: Home Settings (../frontend/js/pages/)\n")


def test_an_app_holding_other_apps_lists_their_classes_once(tmp_path: Path) -> None:
    dotted_apps(tmp_path)
    settings = tmp_path / "beacon" / "settings.py"
    settings.write_text(
        settings.read_text().replace('"beacon.probes",', '"beacon", "beacon.probes",')
    )
    lines = inventory_lines(str(tmp_path))
    assert lines[0].startswith("APPS: beacon(beacon/) probes(beacon/probes/) ")
    assert "VIEWSETS: ProbeViewSet" in lines
