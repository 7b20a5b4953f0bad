"""Facts that two packages must agree on but may not import from each other.

The architecture forbids karni-provider-testkit from importing karni-cli, so
the testkit keeps its own copy of the seed's CI variables; this keeps the two
copies equal.
"""

from __future__ import annotations

from karni.cli.ci import CI_VARIABLES as CLI_CI_VARIABLES
from karni_provider_testkit.runner import CI_VARIABLES as TESTKIT_CI_VARIABLES

SEED_CI_VARIABLES = {
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


def test_the_ci_variables_are_the_seeds_in_both_packages() -> None:
    assert set(CLI_CI_VARIABLES) == SEED_CI_VARIABLES
    assert tuple(TESTKIT_CI_VARIABLES) == tuple(CLI_CI_VARIABLES)
