"""``karni-historian models check``: call each configured historian model once."""

from __future__ import annotations

from karni_historian.cli.common import config_files, settings_of
from karni_historian.condense.models.check import check_models
from karni_historian.condense.models.redaction import Redactor

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print one line per configured model; 1 when one does not answer."""
    settings = settings_of(root)
    results = check_models(
        config_files(root), default_window=settings.historian_context, redactor=Redactor()
    )
    if not results:
        print("no historian model is configured: every session uses local/extractive")
        return 0
    for result in results:
        print(result.line())
    return 0 if all(result.ok for result in results) else 1
