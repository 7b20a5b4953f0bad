"""The commands a page shows, read back out of its Markdown so that a test can replay them.

Pages show commands in two ways: a ``bash`` block of command lines (comments
after ``#``, steps joined with ``&&``), and a ``console`` block where each
``$ `` line is a command and the lines below it, up to the next ``$ ``, are
what it prints.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def section(markdown: str, heading: str) -> str:
    """The text under ``## heading`` up to the next heading of that level."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert match, f"no `## {heading}` section"
    return match.group(1)


def fenced_blocks(markdown: str, language: str) -> list[str]:
    """The bodies of the fenced code blocks tagged ``language``, in page order."""
    return [body for tag, body in FENCE.findall(markdown) if tag == language]


def commands(line: str) -> list[list[str]]:
    """One shell line as argument lists: ``a x && cd y  # why`` → ``[["a", "x"], ["cd", "y"]]``."""
    steps: list[list[str]] = [[]]
    for token in shlex.split(line, comments=True):
        if token == "&&":
            steps.append([])
        else:
            steps[-1].append(token)
    return [step for step in steps if step]


def bash_commands(block: str) -> list[list[str]]:
    """Every command of a ``bash`` block, in order."""
    return [step for line in block.splitlines() for step in commands(line)]


@dataclass
class ConsoleStep:
    """One ``$ `` line of a console block and the output the page shows for it."""

    line: str
    output: list[str] = field(default_factory=list)

    @property
    def argv(self) -> list[list[str]]:
        return commands(self.line)


def console_steps(block: str) -> list[ConsoleStep]:
    """The steps of a ``console`` block."""
    steps: list[ConsoleStep] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append(ConsoleStep(line[2:]))
        else:
            assert steps, f"output before the first command: {line!r}"
            steps[-1].output.append(line)
    return steps
