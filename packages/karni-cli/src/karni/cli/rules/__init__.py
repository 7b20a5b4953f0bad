"""Karni's rules and what a project makes of them.

:mod:`~karni.cli.rules.model` (a rule, a rule file's settings),
:mod:`~karni.cli.rules.registry` (Karni's own rules, the listing),
:mod:`~karni.cli.rules.conditions` (when conditional rules such as K008 apply),
:mod:`~karni.cli.rules.file` (reading ``karni.rules.py``),
:mod:`~karni.cli.rules.agents` and :mod:`~karni.cli.rules.adapters` (the
files that point each agent tool at Karni). Each imports only the ones listed
before it, and nothing is imported here: ``karni rules`` runs before almost
every task an agent starts.
"""
