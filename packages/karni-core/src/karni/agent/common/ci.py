"""Telling whether Karni runs in continuous integration.

In CI nobody reads a tip, and tests that run Karni clear these variables to
behave like a user's shell. Both use :data:`CI_VARIABLES`.
"""

from __future__ import annotations

import os

__all__ = ["CI_VARIABLES", "FALSE_VALUES", "in_ci"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

CI_VARIABLES = (
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
)
"""Environment variables CI services set; any one of them, set to a true value, means CI."""

FALSE_VALUES = frozenset({"", "0", "false", "no", "off"})
"""Values (compared without case or surrounding spaces) that do not count as CI."""


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """Whether any CI variable (in ``environ``, default ``os.environ``) has a true value."""
    env = os.environ if environ is None else environ
    for name in CI_VARIABLES:
        value = env.get(name)
        if value is not None and value.strip().lower() not in FALSE_VALUES:
            return True
    return False
