"""A small Karni project on disk, to point a provider at.

Providers read stores kept beside a project; the conformance suite and the
``karni_project`` fixture need a real-looking project for them (and for
``karni context``) to work in: a ``manage.py``, one app with a model and a viewset,
and one page.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PROJECT_FILES", "make_karni_project"]

PROJECT_FILES: dict[str, str] = {
    "manage.py": (
        "#!/usr/bin/env python\n"
        '"""The project\'s command-line utility."""\n'
        "import os\n"
        "import sys\n"
        "\n"
        'if __name__ == "__main__":\n'
        '    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")\n'
        "    from django.core.management import execute_from_command_line\n"
        "\n"
        "    execute_from_command_line(sys.argv)\n"
    ),
    "config/__init__.py": "",
    "config/settings.py": (
        'INSTALLED_APPS = ["apps.events", "karni_core"]\n'
        'ROOT_URLCONF = "config.urls"\n'
        'SECRET_KEY = "test-only"\n'
    ),
    "apps/__init__.py": "",
    "apps/events/__init__.py": "",
    "apps/events/apps.py": (
        "from django.apps import AppConfig\n"
        "\n"
        "\n"
        "class EventsConfig(AppConfig):\n"
        '    name = "apps.events"\n'
    ),
    "apps/events/models.py": (
        "from django.db import models\n"
        "from karni.models import SoftDeleteModel\n"
        "\n"
        "\n"
        "class Event(SoftDeleteModel):\n"
        "    title = models.CharField(max_length=200)\n"
        "    starts_at = models.DateTimeField()\n"
        "    capacity = models.PositiveIntegerField()\n"
        '    status = models.CharField(max_length=20, default="draft")\n'
    ),
    "apps/events/viewsets.py": (
        "from karni.api import BaseViewSet\n"
        "\n"
        "from .models import Event\n"
        "\n"
        "\n"
        "class EventViewSet(BaseViewSet):\n"
        "    queryset = Event.objects.all()\n"
    ),
    "frontend/src/pages/EventList.tsx": (
        "export default function EventList() {\n  return <main>Events</main>;\n}\n"
    ),
}
"""The files :func:`make_karni_project` writes: project-relative POSIX path → text."""


def make_karni_project(root: Path) -> Path:
    """Write a small Karni project into ``root`` (created if needed) and return it.

    The project has a ``manage.py`` (which makes the folder a Karni project),
    an app ``apps/events`` with an ``Event`` model and a viewset, and one
    page, ``frontend/src/pages/EventList.tsx``. Nothing else: no history
    store, no ``.karni/`` folder.

    Args:
        root: The folder to create the project in; it may already exist.

    Returns:
        ``root``, as an absolute path.
    """
    root = Path(root).absolute()
    for relative, text in PROJECT_FILES.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root
