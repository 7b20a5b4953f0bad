"""Django projects in the layouts real projects use, written from scratch for the inventory's tests.

``karni context`` reads a project without running it, so it has to find its
way through every common way of laying out a Django project. Each function
here writes one such project into an empty folder (nothing is copied from
anywhere; every name is made up) and returns the folder ``karni`` runs in:

- :func:`dotted_apps`: settings in ``<package>/settings.py``, named by
  ``manage.py``, apps listed as ``package.app`` and as ``AppConfig`` paths;
- :func:`settings_package`: a ``settings/`` package whose ``__init__`` pulls
  in ``base`` and ``local`` with star imports, ``manage.py`` naming the package;
- :func:`split_settings`: django-split-settings' ``include()`` of component
  files, ``INSTALLED_APPS`` grown in a later file;
- :func:`abstract_bases`: models built on abstract bases and mixins with many
  fields of their own, and a model with no field to show;
- :func:`monorepo`: ``backend/`` with ``manage.py`` and ``frontend/js/pages/``
  beside it, React named in the ``package.json`` at the repository's top;
- :func:`large_project`: about a thousand Python files in twenty apps, with
  hundreds of models and viewsets (the whole-output budget's test and the
  bench's uncached inventory row).

Used by karni-cli's inventory tests and ``scripts/bench``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

__all__ = [
    "abstract_bases",
    "dotted_apps",
    "large_project",
    "monorepo",
    "settings_package",
    "split_settings",
    "write_files",
]

DJANGO_APPS = (
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
)


def installed_apps(*entries: str, brackets: str = "[]", prefix: str = "") -> str:
    """``INSTALLED_APPS = [...]`` listing Django's own apps, then ``entries``, one a line."""
    lines = "".join(f'    "{entry}",\n' for entry in (*DJANGO_APPS, *entries))
    return f"{prefix}INSTALLED_APPS = {brackets[0]}\n{lines}{brackets[1]}\n"


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write each ``relative path: text`` under ``root`` (text dedented); return ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def manage_py(settings_module: str) -> str:
    """A ``manage.py`` as ``django-admin startproject`` writes one, naming ``settings_module``."""
    return f'''\
        #!/usr/bin/env python
        """Django's command-line utility for administrative tasks."""
        import os
        import sys


        def main():
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "{settings_module}")
            from django.core.management import execute_from_command_line

            execute_from_command_line(sys.argv)


        if __name__ == "__main__":
            main()
        '''


def dotted_apps(root: Path) -> Path:
    """A monitoring service: ``beacon/settings.py``, apps ``beacon.probes``, ``beacon.panel``, …."""
    return write_files(
        root,
        {
            "manage.py": manage_py("beacon.settings"),
            "beacon/__init__.py": "",
            "beacon/settings.py": installed_apps(
                "rest_framework",
                "beacon.probes",
                "beacon.panel",
                "beacon.alerts.apps.AlertsConfig",
                prefix="DEBUG = False\n",
            ),
            "beacon/urls.py": "urlpatterns = []\n",
            "beacon/probes/__init__.py": "",
            "beacon/probes/models.py": """\
                from django.db import models


                class Probe(models.Model):
                    target = models.URLField()
                    interval = models.PositiveIntegerField()
                    timeout = models.PositiveIntegerField()
                    enabled = models.BooleanField(default=True)


                class Result(models.Model):
                    probe = models.ForeignKey(Probe, on_delete=models.CASCADE)
                    status_code = models.IntegerField()
                    latency_ms = models.FloatField()
                """,
            "beacon/probes/api.py": """\
                from rest_framework import viewsets


                class ProbeViewSet(viewsets.ModelViewSet):
                    pass
                """,
            "beacon/panel/__init__.py": "",
            "beacon/panel/views.py": "def index(request):\n    return None\n",
            "beacon/alerts/__init__.py": "",
            "beacon/alerts/apps.py": """\
                from django.apps import AppConfig


                class AlertsConfig(AppConfig):
                    name = "beacon.alerts"
                    label = "beacon_alerts"
                """,
            "beacon/alerts/models.py": """\
                from django.db import models


                class Rule(models.Model):
                    probe = models.ForeignKey("probes.Probe", on_delete=models.CASCADE)
                    threshold_ms = models.FloatField()
                """,
        },
    )


def settings_package(root: Path) -> Path:
    """``manage.py`` names ``shopfront.settings``: a package star-importing ``base``, ``local``."""
    return write_files(
        root,
        {
            "manage.py": manage_py("shopfront.settings"),
            "shopfront/__init__.py": "",
            "shopfront/settings/__init__.py": """\
                from .base import *  # noqa: F403

                try:
                    from .local import *  # noqa: F403
                except ImportError:
                    pass
                """,
            "shopfront/settings/base.py": installed_apps(prefix="").replace(
                "INSTALLED_APPS", "DJANGO_APPS"
            )
            + (
                'THIRD_PARTY_APPS = ["rest_framework", "django_filters"]\n'
                'LOCAL_APPS = ["catalog", "orders.apps.OrdersConfig"]\n'
                "INSTALLED_APPS = DJANGO_APPS + THIRD_PARTY_APPS + LOCAL_APPS\n"
            ),
            "shopfront/settings/local.py": """\
                from .base import INSTALLED_APPS

                INSTALLED_APPS += ["reviews"]
                """,
            "catalog/__init__.py": "",
            "catalog/models.py": """\
                from django.db import models


                class Product(models.Model):
                    title = models.CharField(max_length=100)
                    price = models.DecimalField(max_digits=8, decimal_places=2)
                """,
            "orders/__init__.py": "",
            "orders/apps.py": """\
                from django.apps import AppConfig


                class OrdersConfig(AppConfig):
                    name = "orders"
                """,
            "orders/models.py": """\
                from django.db import models


                class Order(models.Model):
                    number = models.CharField(max_length=20)
                """,
            "reviews/__init__.py": "",
            "reviews/models.py": """\
                from django.db import models


                class Review(models.Model):
                    stars = models.PositiveSmallIntegerField()
                """,
        },
    )


def split_settings(root: Path) -> Path:
    """django-split-settings: ``settings/__init__.py`` includes component files, in order."""
    return write_files(
        root,
        {
            "manage.py": manage_py("server.settings"),
            "server/__init__.py": "",
            "server/settings/__init__.py": """\
                from split_settings.tools import include, optional

                include(
                    "components/common.py",
                    "components/apps.py",
                    optional("environments/local.py"),
                )
                """,
            "server/settings/components/__init__.py": "",
            "server/settings/components/common.py": installed_apps(
                "server.apps.main", brackets="()"
            ),
            "server/settings/components/apps.py": """\
                INSTALLED_APPS += ("server.apps.billing",)
                """,
            "server/apps/__init__.py": "",
            "server/apps/main/__init__.py": "",
            "server/apps/main/models.py": """\
                from django.db import models


                class BlogPost(models.Model):
                    title = models.CharField(max_length=80)
                    body = models.TextField()
                """,
            "server/apps/billing/__init__.py": "",
            "server/apps/billing/models.py": """\
                from django.db import models


                class Invoice(models.Model):
                    amount = models.DecimalField(max_digits=9, decimal_places=2)
                """,
        },
    )


ABSTRACT_BASES = """\
    from django.contrib.contenttypes.fields import GenericRelation
    from django.db import models


    class ChangeLogged(models.Model):
        created = models.DateTimeField(auto_now_add=True)
        last_updated = models.DateTimeField(auto_now=True)

        class Meta:
            abstract = True


    class Primary(ChangeLogged):
        description = models.CharField(max_length=200, blank=True)
        comments = models.TextField(blank=True)
        custom_field_data = models.JSONField(default=dict)

        class Meta:
            abstract = True


    class ContactsMixin(models.Model):
        contacts = GenericRelation("contacts.Assignment")

        class Meta:
            abstract = True


    class ImagesMixin(models.Model):
        images = GenericRelation("extras.Image")

        class Meta:
            abstract = True


    class DistanceMixin(models.Model):
        distance = models.DecimalField(max_digits=8, decimal_places=2, null=True)
        distance_unit = models.CharField(max_length=50, blank=True)

        class Meta:
            abstract = True
    """


def abstract_bases(root: Path) -> Path:
    """Models on abstract bases with many fields; a ``Token`` subclass with none of its own."""
    return write_files(
        root,
        {
            "manage.py": manage_py("wires.settings"),
            "wires/__init__.py": "",
            "wires/settings.py": installed_apps(
                "rest_framework.authtoken", "core", "links", "users"
            ),
            "core/__init__.py": "",
            "core/models.py": ABSTRACT_BASES,
            "links/__init__.py": "",
            "links/models.py": """\
                from core.models import ContactsMixin, DistanceMixin, ImagesMixin, Primary
                from django.db import models


                class Link(ContactsMixin, ImagesMixin, DistanceMixin, Primary):
                    cid = models.CharField(max_length=100)
                    carrier = models.ForeignKey("Carrier", on_delete=models.PROTECT)
                    kind = models.ForeignKey("LinkKind", on_delete=models.PROTECT)
                    status = models.CharField(max_length=50)
                    install_date = models.DateField(null=True)


                class Carrier(ContactsMixin, Primary):
                    name = models.CharField(max_length=100)
                    slug = models.SlugField()


                class LinkKind(Primary):
                    pass
                """,
            "users/__init__.py": "",
            "users/models.py": """\
                from rest_framework.authtoken.models import Token


                class UserToken(Token):
                    pass
                """,
        },
    )


def monorepo(root: Path) -> Path:
    """``backend/manage.py`` with ``config/settings/``; the React pages in ``frontend/js/pages/``.

    Returns the repository's top (``karni`` runs in ``backend/``).
    """
    return write_files(
        root,
        {
            "package.json": """\
                {
                  "name": "tidepool",
                  "private": true,
                  "dependencies": {"react": "^18.3.1", "react-dom": "^18.3.1"}
                }
                """,
            "frontend/js/index.js": "import App from './App';\n",
            "frontend/js/App.js": "export default function App() { return null; }\n",
            "frontend/js/pages/Home.js": "export default function Home() { return null; }\n",
            "frontend/js/pages/Settings.js": "export default () => null;\n",
            "frontend/js/pages/__tests__/Home.spec.js": "test('x', () => {});\n",
            "frontend/js/components/Button.js": "export const Button = () => null;\n",
            "backend/manage.py": manage_py("tidepool.settings.local"),
            "backend/tidepool/__init__.py": "",
            "backend/tidepool/settings/__init__.py": "",
            "backend/tidepool/settings/base.py": installed_apps("common", "users"),
            "backend/tidepool/settings/local.py": """\
                from .base import *  # noqa: F403

                INSTALLED_APPS.append("debug_toolbar")
                """,
            "backend/common/__init__.py": "",
            "backend/common/models.py": """\
                from django.db import models


                class IndexedTimeStampedModel(models.Model):
                    created = models.DateTimeField(auto_now_add=True, db_index=True)
                    modified = models.DateTimeField(auto_now=True, db_index=True)

                    class Meta:
                        abstract = True
                """,
            "backend/users/__init__.py": "",
            "backend/users/models.py": """\
                from common.models import IndexedTimeStampedModel
                from django.db import models


                class User(IndexedTimeStampedModel):
                    email = models.EmailField(unique=True)
                    is_staff = models.BooleanField(default=False)
                """,
            "backend/users/views.py": """\
                from rest_framework import viewsets


                class UserViewSet(viewsets.ModelViewSet):
                    pass
                """,
        },
    )


LARGE_APPS = (
    "sites",
    "racks",
    "devices",
    "cables",
    "power",
    "circuits",
    "addresses",
    "vlans",
    "vpn",
    "wireless",
    "tenancy",
    "contacts",
    "extras",
    "jobs",
    "reports",
    "users",
    "tags",
    "journal",
    "webhooks",
    "imports",
)
"""The apps of :func:`large_project`."""


def _large_app(app: str, index: int) -> dict[str, str]:
    """One app of :func:`large_project`: models, viewsets and the files around them (48 files)."""
    title = app.capitalize()
    files: dict[str, str] = {f"{app}/__init__.py": "", f"{app}/models/__init__.py": ""}
    for module in range(4):
        body = ["from django.db import models", "from core.models import Primary, ContactsMixin"]
        for number in range(3):
            name = f"{title}Item{module}{number}"
            body += [
                "",
                "",
                f"class {name}(ContactsMixin, Primary):",
                f"    label = models.CharField(max_length={20 + number})",
                "    code = models.SlugField()",
                "    owner = models.ForeignKey('users.UsersItem00', on_delete=models.PROTECT)"
                if app != "users"
                else "    email = models.EmailField()",
                "    status = models.CharField(max_length=30)",
                "    weight = models.IntegerField(default=0)",
            ]
        files[f"{app}/models/part{module}.py"] = "\n".join(body) + "\n"
    views = ["from core.api import LedgerViewSet"]
    for module in range(4):
        for number in range(3):
            name = f"{title}Item{module}{number}ViewSet"
            views += ["", "", f"class {name}(LedgerViewSet):", "    pass"]
    files[f"{app}/api/__init__.py"] = ""
    files[f"{app}/api/views.py"] = "\n".join(views) + "\n"
    filler = (
        ["api/serializers", "api/urls", "filtersets", "views", "urls", "admin", "search"]
        + [f"forms/form{n}" for n in range(6)]
        + [f"tables/table{n}" for n in range(5)]
        + [f"migrations/{n:04d}_step" for n in range(1, 11)]
        + [f"tests/test_part{n}" for n in range(6)]
        + [f"graphql/part{n}" for n in range(4)]
        + ["signals", "choices", "constants"]
    )
    for name in filler:
        files[f"{app}/{name}.py"] = f'"""{app}: {name} (app {index})."""\n\nVALUE = {index}\n'
    return files


def large_project(root: Path) -> Path:
    """About a thousand Python files: twenty apps on shared abstract bases, 240 models.

    ``manage.py`` sits in ``ledger/`` below the repository's top, as in many
    projects that keep docs and scripts beside the Django project. Returns the
    folder holding ``manage.py``.
    """
    project = root / "ledger"
    files = {
        "manage.py": manage_py("ledger.settings"),
        "ledger/__init__.py": "",
        "ledger/settings.py": installed_apps("core", *LARGE_APPS),
        "core/__init__.py": "",
        "core/models.py": ABSTRACT_BASES,
        "core/api.py": """\
            from rest_framework import viewsets


            class LedgerViewSet(viewsets.ModelViewSet):
                pass
            """,
    }
    for index, app in enumerate(LARGE_APPS):
        files.update(_large_app(app, index))
    write_files(project, files)
    write_files(root, {"README.md": "# ledger\n", "docs/index.md": "# docs\n"})
    return project
