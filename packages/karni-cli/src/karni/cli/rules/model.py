"""What a rule is, what a project's ``karni.rules.py`` says, and its error: plain data.

The registry (:mod:`karni.cli.rules.registry`), the rule file's loader
(:mod:`karni.cli.rules.file`) and parser (:mod:`karni.cli.rules.parse`) and
the agent adapters (:mod:`karni.cli.rules.adapters`) all use these, so they
live below all of them and nothing imports in a circle.
"""

from __future__ import annotations

from karni.cli.errors import KarniError

__all__ = ["CATEGORIES", "RULES_FILE_NAME", "SEVERITIES", "Rule", "RulesFile", "RulesFileError"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CATEGORIES = ("workflow", "architecture", "backend", "frontend", "project")
"""Rule categories, in the order the listing shows their sections."""

SEVERITIES = ("must", "should")
"""``must``: required; ``should``: expected unless there is a stated reason not to."""

RULES_FILE_NAME = "karni.rules.py"
"""The project rule file's name, at the project root."""


class Rule:
    """One convention: a stable code, where it belongs, and what it asks."""

    __slots__ = (
        "category",
        "code",
        "condition",
        "fix",
        "rationale",
        "rule",
        "severity",
        "source",
        "summary",
    )

    def __init__(
        self,
        code: str,
        category: str,
        severity: str,
        summary: str,
        rule: str,
        rationale: str | None = None,
        fix: str | None = None,
        *,
        condition: str | None = None,
        source: str = "karni",
    ) -> None:
        """Create a rule.

        Args:
            code: The stable code (``K004``; project rules use other letters).
            category: One of :data:`CATEGORIES`.
            severity: One of :data:`SEVERITIES`.
            summary: The one line the listing shows after the code.
            rule: The full rule.
            rationale: Why the rule exists.
            fix: What to do about a breach, where there is a recipe.
            condition: The condition (from ``active_conditions``) the rule
                needs to be in effect; None for an unconditional rule.
            source: ``karni`` for Karni's rules, ``karni.rules.py`` for a project's.
        """
        self.code = code
        self.category = category
        self.severity = severity
        self.summary = summary
        self.rule = rule
        self.rationale = rationale
        self.fix = fix
        self.condition = condition
        self.source = source

    def replace(self, **changes: Any) -> Rule:
        """A copy with some fields changed."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return Rule(**fields)

    def as_dict(self) -> dict[str, Any]:
        """The rule as plain data, for ``--json``."""
        return {
            "code": self.code,
            "category": self.category,
            "severity": self.severity,
            "summary": self.summary,
            "rule": self.rule,
            "rationale": self.rationale,
            "fix": self.fix,
            "condition": self.condition,
            "source": self.source,
        }

    def __repr__(self) -> str:
        return f"Rule({self.code!r}, {self.category!r}, {self.severity!r}, {self.summary!r})"


class RulesFile:
    """What a project's ``karni.rules.py`` says; empty when the project has none."""

    __slots__ = ("adapters", "add", "disable", "override", "path")

    def __init__(
        self,
        path: str | None = None,
        add: tuple[Rule, ...] = (),
        override: dict[str, dict[str, str]] | None = None,
        disable: frozenset[str] = frozenset(),
        adapters: dict[str, str | None] | None = None,
    ) -> None:
        """Hold the settings.

        Args:
            path: The file read (its path as a string), or None when the project has none.
            add: The project's own rules.
            override: Karni rule code → the fields that replace its own.
            disable: Karni rule codes switched off.
            adapters: Adapter name → its project-relative POSIX path, or None
                when switched off; adapters not named keep their defaults.
        """
        self.path = path
        self.add = add
        self.override = override or {}
        self.disable = disable
        self.adapters = adapters or {}

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain data, for ``karni rules --json``."""
        return {
            "path": RULES_FILE_NAME if self.path is not None else None,
            "add": [rule.code for rule in self.add],
            "override": {code: dict(fields) for code, fields in sorted(self.override.items())},
            "disable": sorted(self.disable),
            "adapters": dict(sorted(self.adapters.items())),
        }


class RulesFileError(KarniError):
    """``karni.rules.py`` is malformed; the message names the file, the line and the fix."""

    def __init__(self, line: int, problem: str, fix: str) -> None:
        """Build the one-line message ``karni.rules.py:LINE: PROBLEM; FIX``."""
        super().__init__(f"{RULES_FILE_NAME}:{line}: {problem}; {fix}")
        self.line = line
