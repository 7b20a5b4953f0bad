"""The static inventory: what `karni context` reports, read without running the project."""

from __future__ import annotations

import sys
from pathlib import Path

from karni.agent.history import estimate_tokens
from karni.cli.inventory import MAX_MODELS, inventory_lines, render
from karni.cli.inventory.report import EMPTY_INVENTORY

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

from django_layouts import write_files as write

SETTINGS = """
    INSTALLED_APPS = [
        "apps.shop",
        "apps.blog.apps.BlogConfig",
        # karni:apps
        "django.contrib.admin",
        "karni_auth",
        "karni_billing.apps.BillingConfig",
        "apps.late",
    ]
"""


def test_example_project_inventory_is_small_and_complete(eventsite: Path) -> None:
    text = render(str(eventsite))
    assert text.endswith("\n")
    assert estimate_tokens(text) < 200
    assert [line.split(":", 1)[0] for line in text.splitlines()] == [
        "APPS",
        "MODELS",
        "VIEWSETS",
        "PAGES",
        "MODULES",
        "BASES",
    ]
    assert "Event(title,starts_at,capacity,status)" in text
    assert (
        "BASES: BaseModel SoftDeleteModel BaseViewSet KarniModelAdmin AbstractKarniUser\n" in text
    )


def test_apps_are_the_entries_before_the_marker_with_labels(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "manage.py": "",
            "config/settings.py": SETTINGS,
            "apps/shop/apps.py": "class ShopConfig:\n    name = 'apps.shop'\n    label = 'store'\n",
            "apps/blog/apps.py": "class BlogConfig:\n    name = 'apps.blog'\n",
            "apps/late/models.py": "",
        },
    )
    lines = inventory_lines(str(tmp_path))
    assert lines[0] == "APPS: store(apps/shop/) blog(apps/blog/)"
    assert "MODULES: karni_auth karni_billing" in lines


def test_apps_fall_back_to_local_app_folders_without_settings(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "manage.py": "",
            "apps/zoo/models.py": "",
            "apps/alpha/apps.py": "",
            "apps/notanapp/readme.txt": "",
            "core/models.py": "",
            "frontend/src/pages/Home.tsx": "",
        },
    )
    assert (
        inventory_lines(str(tmp_path))[0] == "APPS: core(core/) alpha(apps/alpha/) zoo(apps/zoo/)"
    )


def test_installed_apps_built_from_other_lists_and_augmented(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/settings.py": """
                LOCAL = ["apps.one"]
                INSTALLED_APPS = ["django.contrib.auth"] + LOCAL
                INSTALLED_APPS += ("apps.two", "karni_x")
            """,
            "apps/one/models.py": "",
            "apps/two/models.py": "",
        },
    )
    lines = inventory_lines(str(tmp_path))
    assert lines == ["APPS: one(apps/one/) two(apps/two/)", "MODULES: karni_x"]


def test_models_fields_and_what_is_left_out(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/settings.py": 'INSTALLED_APPS = ["shop"]\n',
            "shop/models.py": """
                from django.db import models
                from django.contrib.auth.models import AbstractUser
                from karni.models import BaseModel


                class Status(models.TextChoices):
                    OPEN = "open"


                class ProductQuerySet(models.QuerySet):
                    pass


                class Stamped(models.Model):
                    label = models.CharField(max_length=9)
                    created_at = models.DateTimeField()

                    class Meta:
                        abstract = True


                class Product(Stamped):
                    id = models.BigAutoField(primary_key=True)
                    name = models.CharField(max_length=9)
                    updated_at = models.DateTimeField()
                    created_by = models.ForeignKey("User", on_delete=models.PROTECT)
                    price: models.DecimalField = models.DecimalField()
                    tags = models.ManyToManyField("Tag")
                    stock = models.IntegerField()
                    objects = ProductQuerySet.as_manager()

                    def __str__(self):
                        return self.name


                class Tag(BaseModel):
                    pass


                class User(AbstractUser):
                    password = models.CharField(max_length=128)
                    last_login = models.DateTimeField()
                    nickname = models.CharField(max_length=9)


                class NotAModel:
                    name = models.CharField()
            """,
        },
    )
    lines = inventory_lines(str(tmp_path))
    assert "MODELS: Product(name,price,tags,stock) Tag User(nickname)" in lines
    assert lines[-1] == "BASES: BaseModel"


def test_models_package_and_cross_file_bases(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/settings.py": 'INSTALLED_APPS = ["apps.core", "apps.shop"]\n',
            "apps/core/models.py": """
                from django.db import models


                class Base(models.Model):
                    class Meta:
                        abstract = True
            """,
            "apps/shop/models/__init__.py": "from .orders import *\n",
            "apps/shop/models/orders.py": """
                from apps.core.models import Base
                from django.db import models


                class Order(Base):
                    total = models.DecimalField()
            """,
            "apps/shop/models/carts.py": """
                from .orders import Order


                class SpecialOrder(Order):
                    pass
            """,
        },
    )
    lines = inventory_lines(str(tmp_path))
    assert "MODELS: SpecialOrder Order(total)" in lines
    assert not any(line.startswith("BASES:") for line in lines)


def test_more_than_max_models_are_counted(tmp_path: Path) -> None:
    count = MAX_MODELS + 3
    body = "from django.db import models\n" + "".join(
        f"class M{i}(models.Model):\n    f = models.IntegerField()\n" for i in range(count)
    )
    write(tmp_path, {"config/settings.py": 'INSTALLED_APPS = ["a"]\n', "a/models.py": body})
    models_line = next(line for line in inventory_lines(str(tmp_path)) if line.startswith("MODELS"))
    shown = models_line.split()[1:]
    assert len(shown) == MAX_MODELS + 2
    assert shown[-2:] == ["+3", "more"]
    assert shown[0] == "M0(f)" and shown[MAX_MODELS - 1] == f"M{MAX_MODELS - 1}(f)"


def test_viewsets_anywhere_in_the_app_but_tests_and_migrations(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/settings.py": 'INSTALLED_APPS = ["shop"]\n',
            "shop/api/views.py": """
                from rest_framework import viewsets
                from karni.api import BaseViewSet


                class FilterMixin:
                    pass


                class LocalBase(viewsets.ModelViewSet):
                    pass


                class ProductViewSet(FilterMixin, LocalBase):
                    pass


                class CartAPI(BaseViewSet):
                    pass


                class Helper:
                    pass
            """,
            "shop/tests/test_views.py": "class FakeViewSet:\n    pass\n",
            "shop/test_api.py": "class OtherViewSet:\n    pass\n",
            "shop/migrations/0001_initial.py": "class MigrationViewSet:\n    pass\n",
        },
    )
    lines = inventory_lines(str(tmp_path))
    assert "VIEWSETS: LocalBase ProductViewSet CartAPI" in lines
    assert lines[-1] == "BASES: BaseViewSet"


def test_pages_without_suffix_and_without_tests(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "manage.py": "",
            "frontend/src/pages/Home.tsx": "",
            "frontend/src/pages/about.jsx": "",
            "frontend/src/pages/Home.test.tsx": "",
            "frontend/src/pages/Home.spec.ts": "",
            "frontend/src/pages/Home.module.css": "",
            "frontend/src/pages/__tests__/About.tsx": "",
            "frontend/src/pages/events/[id].tsx": "",
            "frontend/src/pages/.hidden.tsx": "",
        },
    )
    assert inventory_lines(str(tmp_path)) == [EMPTY_INVENTORY, "PAGES: Home about events/[id]"]


def test_project_code_is_never_run_and_broken_files_are_skipped(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write(
        tmp_path,
        {
            "config/settings.py": f"open({str(marker)!r}, 'w')\nINSTALLED_APPS = ['a', 'b']\n",
            "a/models.py": f"open({str(marker)!r}, 'w')\nraise SystemExit(3)\n"
            "from django.db import models\nclass A(models.Model):\n    x = models.IntegerField()\n",
            "b/models.py": "class Broken(:\n",
        },
    )
    assert inventory_lines(str(tmp_path)) == ["APPS: a(a/) b(b/)", "MODELS: A(x)"]
    assert not marker.exists()


def test_empty_project_says_so_in_one_inventory_line(tmp_path: Path) -> None:
    (tmp_path / "manage.py").write_text("")
    assert render(str(tmp_path)) == (
        "APPS: none yet (no Django app of the project found; "
        "add one with `python manage.py startapp NAME`)\n"
    )


def test_a_marker_before_installed_apps_does_not_count(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/settings.py": """
                # karni:apps is the marker this file uses (documentation, not the marker)
                INSTALLED_APPS = ["django.contrib.auth", "apps.one"]
            """,
            "apps/one/models.py": "",
        },
    )
    assert inventory_lines(str(tmp_path)) == ["APPS: one(apps/one/)"]


def test_scaffold_shaped_settings_with_the_marker_last(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/settings.py": """
                INSTALLED_APPS = [
                    "django.contrib.admin",
                    "rest_framework",
                    "karni_auth",
                    "apps.events",
                    # Project apps (apps/<name>/) are added just before this marker.
                    # karni:apps
                ]
            """,
            "apps/events/apps.py": "",
        },
    )
    assert inventory_lines(str(tmp_path)) == ["APPS: events(apps/events/)", "MODULES: karni_auth"]
