"""Harness hooks: history handed to coding agents before every edit, without being asked.

``karni hooks install`` writes Karni's hooks into a harness (Claude Code's
settings, an OpenCode plugin, a Pi extension); the harness then runs
``karni hook <agent> <event>`` with the event as JSON on stdin. The modules
here are split by job: reading events (:mod:`.events`), remembering which
files an agent was already briefed on (:mod:`.seen`), answering the harness
(:mod:`.respond`), starting the historian in the background
(:mod:`.historian`), and installing (:mod:`.install`). See ``docs/hooks.md``.
"""
