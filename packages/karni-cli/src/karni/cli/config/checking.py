"""``karni check``'s settings check: both files against every declared setting.

One result per problem, each naming the file and the key: an unknown key, a
value of the wrong type or out of range, a user-only key (a profile) in the
project's file, a selected profile the user file does not define, and any
package whose declarations cannot be read. Historian chains are checked as
declared (backends, reasoning keys per harness, ``base_url`` where needed)
without calling a model. With ``verbose``, every valid key gets an ``ok``
line of its own. With neither file present nothing is loaded: there is
nothing to check. ``karni check`` calls :func:`settings_results` after the
checks of :mod:`karni.cli.checks`, whose result type it uses; that module
never imports this one.
"""

from __future__ import annotations

import os

from karni.agent.common.config import PROJECT, USER, ConfigLayer
from karni.cli.checks import FAILED, OK, SKIPPED, CheckResult
from karni.cli.config.settings import (
    ConfigError,
    declared,
    global_config_path,
    parse,
    project_config_path,
    read_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.agent.common.config import ConfigLayer
    from karni.agent.common.settings_table import Problem, SettingsTable
    from karni.cli.checks import CheckResult

__all__ = ["NAME", "settings_results"]

NAME = "settings"


def _layers(root: str) -> tuple[list[ConfigLayer], list[str]]:
    """Each file that could be read, and one message per file that could not."""
    layers, failures = [], []
    for scope, path in ((PROJECT, project_config_path(root)), (USER, global_config_path())):
        try:
            text = read_text(path)
            layers.append(ConfigLayer(scope, path, {} if text is None else parse(path, text)))
        except ConfigError as error:
            failures.append(str(error))
    return layers, failures


def _passed(table: SettingsTable, layers: list[ConfigLayer], problems: list[Problem]) -> list[str]:
    """``PATH: `key` = value`` for every declared key set and not named by a problem."""
    # bench row "karni check" runs without it
    from karni.agent.common.settings import toml_literal
    from karni.agent.common.settings_table import value_at
    from karni.cli.config.listing import set_keys

    wrong = {(problem.path, problem.key.split("[")[0]) for problem in problems}
    lines = []
    for layer in layers:
        for key in set_keys(table, layer.data):
            if not any(path == layer.path and bad.startswith(key) for path, bad in wrong):
                value = toml_literal(value_at(layer.data, key))
                lines.append(f"{layer.path}: `{key}` = {value}")
    return lines


def settings_results(root: str, *, verbose: bool = False) -> list[CheckResult]:
    """Every problem as a failure; else one ``ok`` (with ``verbose``, one per valid key)."""
    layers, unreadable = _layers(root)
    if not unreadable and not any(os.path.lexists(layer.path) for layer in layers):
        return [CheckResult(NAME, OK, "none (the defaults apply)")]  # nothing to check against
    # bench row "karni check" runs without it
    from karni.agent.common.settings_registry import absent_package
    from karni.agent.common.settings_table import validate_layers

    declarations = declared()
    table = declarations.table()
    problems = validate_layers(table, layers)
    absent = [(problem, absent_package(problem)) for problem in problems]
    skipped = [
        CheckResult(NAME, SKIPPED, f"{p.path}: `{p.key}` is {package}'s table, not installed here")
        for p, package in absent
        if package is not None
    ]
    problems = [problem for problem, package in absent if package is None]
    failures = [*declarations.failures, *unreadable, *(str(problem) for problem in problems)]
    results = [CheckResult(NAME, FAILED, failure) for failure in failures] + skipped
    passed = _passed(table, layers, problems) if verbose else []
    results += [CheckResult(NAME, OK, line) for line in passed]
    if not failures and not passed:
        results.append(CheckResult(NAME, OK, "valid"))
    return results
