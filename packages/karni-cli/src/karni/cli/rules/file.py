"""Reading a project's ``karni.rules.py`` statically, with ``ast``; it is never executed.

The file holds up to four settings, each a plain literal:

- ``ADD``: the project's own rules, dicts with a ``code`` (one to three capital
  letters, not starting with K, and three digits, e.g. ``P001``) and a
  ``rule``; ``summary`` defaults to the rule, ``category`` to ``project``,
  ``severity`` to ``must``;
- ``OVERRIDE``: ``{"K004": {"severity": "should"}}``, changing a Karni rule's
  summary, rule, rationale, fix or severity;
- ``DISABLE``: Karni rule codes to drop, e.g. ``["K008"]``;
- ``ADAPTERS``: ``{"aider": False, "claude": "docs/CLAUDE.md"}``, switching
  agent adapters off or moving them.

Anything else is a :class:`~karni.cli.rules.model.RulesFileError` whose
one-line message names the file, the line and the fix. A project without the
file simply has no project rules. This module reads the file; the AST reader
that judges its text is :mod:`karni.cli.rules.parse`, imported only when a
text was not parsed before.
"""

from __future__ import annotations

import os

from karni.agent.common.errors import FileTooLargeError, UnsafePathError
from karni.agent.common.files import read_regular_file
from karni.cli.rules.model import RULES_FILE_NAME, RulesFile, RulesFileError

__all__ = ["load_rules_file"]

_MAX_RULES_BYTES = 1 << 20


def load_rules_file(project_root: str | os.PathLike[str]) -> RulesFile:
    """Read ``karni.rules.py`` at ``project_root``, without executing it.

    The AST reader (:mod:`karni.cli.rules.parse`) is imported only when the
    file exists and its text was not parsed before
    (:mod:`karni.cli.rules.cache`); the path is kept as a string, so
    ``pathlib`` is never imported.

    Returns:
        The project's settings; an empty :class:`RulesFile` when there is no file.

    Raises:
        RulesFileError: The file cannot be read or breaks a rule of its format.
    """
    name = os.path.join(project_root, RULES_FILE_NAME)
    try:
        source = read_regular_file(name, _MAX_RULES_BYTES)
    except FileNotFoundError:
        return RulesFile()
    except FileTooLargeError:
        raise RulesFileError(
            1, f"is larger than {_MAX_RULES_BYTES:,} bytes", "keep only the four settings in it"
        ) from None
    except UnsafePathError:
        if os.path.isdir(name):
            raise RulesFileError(
                1, "is a folder, not a file", "rename or move it, then write the file in its place"
            ) from None
        raise RulesFileError(
            1, "is not a regular file (a folder, a FIFO or a device)", "make it a plain file"
        ) from None
    except OSError as error:
        raise RulesFileError(
            1, f"cannot be read ({error.strerror})", "check the file's permissions"
        ) from None
    # bench row "karni rules" runs without it
    from karni.cli.rules.cache import cached_rules_file, remember_rules_file

    rules_file = cached_rules_file(name, source)
    if rules_file is None:
        # bench row "karni rules" runs without it
        from karni.cli.rules.parse import parse_rules_source

        rules_file = parse_rules_source(source, name)
        remember_rules_file(name, source, rules_file)
    return rules_file
