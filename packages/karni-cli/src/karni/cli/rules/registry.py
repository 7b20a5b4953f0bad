"""Karni's conventions (K001…), and the rules in effect once a project's rule file applies.

``karni rules`` is how an agent learns how this kind of project is built, so
the registry is data, the listing is compact (under 400 tokens, characters ÷
4) and nothing here imports more than it needs: the command runs before
almost every task. K008 is conditional: it is in effect only when a history
store is detected (the ``history`` condition of
``karni.cli.rules.conditions.active_conditions``). The rules that name
Karni's folders and bases (K002–K005, K010, K011) are in effect only in a
project laid out that way (the ``karni-apps`` and ``karni-pages`` conditions).
"""

from __future__ import annotations

from karni.cli.rules.model import CATEGORIES, SEVERITIES, Rule

__all__ = [
    "CATEGORIES",
    "KARNI_RULES",
    "LISTING_TOKEN_BUDGET",
    "SEVERITIES",
    "Rule",
    "effective_rules",
    "format_explanation",
    "format_listing",
    "inactive_reason",
    "karni_rule",
    "left_out_for_layout",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Set

    from karni.cli.rules.model import RulesFile

LISTING_TOKEN_BUDGET = 400
"""The listing of Karni's own rules stays under this many estimated tokens."""

LISTING_HEADER = "Rules of this Karni project. Follow each one; codes are stable."
LISTING_FOOTER = "Why a rule exists and how to fix a breach: karni rules --explain CODE"


KARNI_RULES: tuple[Rule, ...] = (
    Rule(
        "K001",
        "workflow",
        "must",
        "Start every task with `karni context`; read it before opening files.",
        "Run `karni context` when a task begins and read its inventory (apps, models, "
        "viewsets, pages, bases) before you open or search files. Run it again after you "
        "add an app, a model or a page.",
        "The inventory costs a few hundred tokens and answers most 'where is X' questions "
        "at once. Exploring file by file spends the context window on the wrong things and "
        "misses the conventions the inventory makes visible.",
        "Run `karni context` now and plan the change from what it lists.",
    ),
    Rule(
        "K002",
        "architecture",
        "must",
        "Build on Karni's bases (BaseModel, BaseViewSet and others); never re-write them.",
        "Subclass the bases `karni context` lists under BASES (BaseModel, SoftDeleteModel, "
        "BaseViewSet, KarniModelAdmin, AbstractKarniUser) instead of writing your own "
        "timestamps, soft delete, permission checks, pagination or admin setup.",
        "The bases carry behaviour the rest of the project relies on, such as audit fields, "
        "soft delete and permissions. A hand-made copy drifts away from them and fails in "
        "ways tests rarely catch.",
        "Make the class subclass the matching base and delete the fields and methods it "
        "duplicated.",
        condition="karni-apps",
    ),
    Rule(
        "K003",
        "architecture",
        "must",
        "One Django app per domain in apps/, listed at the `# karni:apps` marker.",
        "Give each domain (events, billing, accounts) its own Django app in "
        "apps/<name>/, and register it in INSTALLED_APPS of config/settings.py on the line "
        "just before the `# karni:apps` marker.",
        "A fixed layout lets `karni context` and every agent find code without searching, "
        "and the marker is where tools add apps, so an app registered elsewhere is easily "
        "missed or listed twice.",
        'Move the code into apps/<name>/ and add "apps.<name>" just before `# karni:apps`.',
        condition="karni-apps",
    ),
    Rule(
        "K004",
        "backend",
        "must",
        "Models live in apps/<app>/models.py and subclass BaseModel.",
        "Define models in apps/<app>/models.py (or a models/ package it re-exports). Every "
        "model subclasses BaseModel, or SoftDeleteModel when its rows must never be deleted.",
        "Models are what the inventory reads first; one predictable place per app keeps "
        "them visible, and the base gives every table the same primary key and audit fields.",
        "Move the model into apps/<app>/models.py, subclass BaseModel, then run "
        "`python manage.py makemigrations <app>`.",
        condition="karni-apps",
    ),
    Rule(
        "K005",
        "backend",
        "must",
        "Viewsets live in apps/<app>/viewsets.py and subclass BaseViewSet.",
        "Write API endpoints as viewsets in apps/<app>/viewsets.py that subclass BaseViewSet, "
        "and register each on the project's API router; no function views for API endpoints.",
        "BaseViewSet applies the project's authentication, permissions and pagination; an "
        "endpoint written another way silently skips them.",
        "Turn the view into a BaseViewSet subclass in apps/<app>/viewsets.py and register "
        "it on the API router.",
        condition="karni-apps",
    ),
    Rule(
        "K006",
        "backend",
        "must",
        "Commit each model change together with the migration makemigrations made for it.",
        "After changing a model run `python manage.py makemigrations <app>` and commit the "
        "model and its migration together. Do not hand-write schema migrations; data "
        "migrations may be written by hand.",
        "A model without its migration breaks every other checkout, and a hand-written "
        "schema migration drifts from what Django expects the next time it compares.",
        "Run `python manage.py makemigrations <app>` and add the new migration to the commit.",
    ),
    Rule(
        "K007",
        "workflow",
        "must",
        "Never hand-edit a generated file; change its source and regenerate it.",
        "A file that says it is generated on its first line (after any front matter), such "
        "as AGENTS.md, CLAUDE.md and the other agent adapters, is rewritten by its "
        "generator. Change the source it is made from (karni.rules.py for the adapters) and "
        "run the generator (`karni rules sync`).",
        "Edits to a generated file are lost at the next regeneration, and `karni check` "
        "reports the file as stale until then.",
        "Undo the edit, put the change in karni.rules.py, then run `karni rules sync`.",
    ),
    Rule(
        "K008",
        "workflow",
        "should",
        "Before editing a file: karni context --with-history FILE.",
        "Before you edit a file, run `karni context --with-history FILE` and read the "
        "HISTORY block: what was already asked about the file, which approaches were tried "
        "and reverted, and which decisions still stand.",
        "This project keeps a prompt-history store. Without reading it an agent repeats "
        "approaches that were reverted for good reasons and undoes decisions that live "
        "nowhere in the code.",
        "Run `karni context --with-history FILE` for the file you are about to edit, and "
        "follow its standing decisions or say why you depart from them.",
        condition="history",
    ),
    Rule(
        "K009",
        "workflow",
        "must",
        "Run `karni check` before committing; commit only when it passes.",
        "Before every commit run `karni check` and the project's tests, fix everything "
        "they report, and only then commit. `karni check` checks the agent adapters, "
        "karni.rules.py, the settings and the registered checks without running the "
        "project's code; it runs Django's system checks through the project's "
        ".venv interpreter only in a project the user trusted with `karni trust`.",
        "Problems cost little to fix before a commit and much more after a merge; unchecked "
        "work hands its mistakes to the next person or agent.",
        "Run `karni check`, fix what it reports, and commit again.",
    ),
    Rule(
        "K010",
        "frontend",
        "must",
        "Pages live in frontend/src/pages/, one component per route.",
        "Each route of the React app is one page component in frontend/src/pages/ (for "
        "example EventListPage.tsx for /events). Shared pieces live in "
        "frontend/src/components/ and are reused before new ones are written.",
        "Agents and people find a screen from its route only when pages have one home; "
        "pages scattered among components get duplicated.",
        "Move the route's component into frontend/src/pages/ and import shared pieces from "
        "frontend/src/components/.",
        condition="karni-pages",
    ),
    Rule(
        "K011",
        "frontend",
        "should",
        "Call the API through frontend/src/api/, never with fetch in a page.",
        "Pages and components reach the backend only through the functions in "
        "frontend/src/api/ (one module per Django app), which keep URLs, headers and error "
        "handling in one place.",
        "A fetch call inside a page duplicates URLs and error handling, and breaks silently "
        "when a viewset changes.",
        "Move the call into a function in frontend/src/api/<app>.ts and call that function.",
        condition="karni-pages",
    ),
)
"""Karni's own rules, in code order."""


def karni_rule(code: str) -> Rule | None:
    """Karni's rule with this code (exact, upper case), or None."""
    for rule in KARNI_RULES:
        if rule.code == code:
            return rule
    return None


def _sort_key(rule: Rule) -> tuple[int, bool, str]:
    # Within a section, Karni's rules come first, then the project's.
    return (CATEGORIES.index(rule.category), rule.source != "karni", rule.code)


def effective_rules(conditions: Set[str], rules_file: RulesFile | None = None) -> list[Rule]:
    """The rules in effect, in listing order: by section, Karni's before the project's, by code.

    Args:
        conditions: The active conditions (``active_conditions(root)``); a
            conditional rule is in effect only when its condition is here.
        rules_file: The project's rules (``load_rules_file``); its overrides
            apply, its disabled rules are dropped and its own rules are added.
    """
    override = rules_file.override if rules_file is not None else {}
    disabled = rules_file.disable if rules_file is not None else frozenset()
    chosen: list[Rule] = []
    for rule in KARNI_RULES:
        if rule.code in disabled:
            continue
        if rule.condition is not None and rule.condition not in conditions:
            continue
        changes = override.get(rule.code)
        chosen.append(rule.replace(**changes) if changes else rule)
    if rules_file is not None:
        chosen.extend(rules_file.add)
    return sorted(chosen, key=_sort_key)


_WHEN = {
    "history": "only when a prompt-history store is detected (condition `history`); "
    "see `karni doctor`",
    "karni-apps": "only in Karni's layout, which this project does not follow: apps in apps/, "
    "listed before the `# karni:apps` marker in config/settings.py (condition `karni-apps`)",
    "karni-pages": "only where the pages are in frontend/src/pages/, as in Karni's layout; "
    "this project keeps them elsewhere or has none (condition `karni-pages`)",
}
"""When each condition holds, as ``--explain`` says it of a rule not in effect."""

LAYOUT_NOTE = "Left out here, as this project is not in Karni's layout:"
"""How the listing starts the line naming the layout rules that do not apply."""


def inactive_reason(code: str, conditions: Set[str], rules_file: RulesFile | None = None) -> str:
    """Why ``code`` is not in effect, as the one-line error ``--explain`` prints."""
    rule = karni_rule(code)
    if rule is not None and rules_file is not None and code in rules_file.disable:
        return f"rule {code} is disabled by DISABLE in karni.rules.py; remove it there to use it"
    if rule is not None and rule.condition is not None and rule.condition not in conditions:
        when = _WHEN.get(rule.condition, f"only under the condition `{rule.condition}`")
        return f"rule {code} is not active here: it applies {when}"
    return f"unknown rule code `{code}`; run `karni rules` for the codes in effect"


def left_out_for_layout(
    conditions: Set[str], layout: Iterable[str], rules_file: RulesFile | None = None
) -> list[str]:
    """Karni's rules (not disabled) whose ``layout`` condition does not hold, in code order."""
    wanted = set(layout)
    disabled = rules_file.disable if rules_file is not None else frozenset()
    return [
        rule.code
        for rule in KARNI_RULES
        if rule.condition in wanted
        and rule.condition not in conditions
        and rule.code not in disabled
    ]


def format_listing(rules: Iterable[Rule], left_out: Iterable[str] = ()) -> str:
    """The compact listing: header, ``[category]`` sections of ``CODE summary`` lines, footer.

    ``left_out`` names Karni's layout rules not in effect (see
    :func:`left_out_for_layout`): one line before the footer says so.
    """
    lines = [LISTING_HEADER]
    section = None
    for rule in rules:
        if rule.category != section:
            section = rule.category
            lines.append(f"[{section}]")
        lines.append(f"{rule.code} {rule.summary}")
    codes = " ".join(left_out)
    if codes:
        lines.append(f"{LAYOUT_NOTE} {codes}")
    lines.append(LISTING_FOOTER)
    return "\n".join(lines) + "\n"


def format_explanation(rule: Rule) -> str:
    """The full rule, why it exists and the fix, as ``--explain`` prints it."""
    lines = [f"{rule.code} [{rule.category}, {rule.severity}] {rule.summary}"]
    if rule.rule != rule.summary:
        lines += ["", rule.rule]
    if rule.rationale:
        lines += ["", f"Why: {rule.rationale}"]
    if rule.fix:
        lines += ["", f"Fix: {rule.fix}"]
    if rule.source != "karni":
        lines += ["", f"Defined in {rule.source}."]
    return "\n".join(lines) + "\n"
