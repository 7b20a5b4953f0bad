"""The secret patterns: one documented list for redaction, sharing and ``doctor``.

A prompt sent to a model, a failure dump and a shared history file
(``.karni/history/``) all go through the same list, so a token that one of
them recognises, all do. :class:`~karni_historian.condense.models.redaction.Redactor`
replaces what they match; :func:`find_secret` only tells whether (and which
kind of) a secret is in a text: ``share`` refuses a session whose text still
holds one after redaction, and reading a shared file skips one that does.
The list is documented in ``docs/how-to/team-history.md`` and
``docs/how-to/historian-model.md``.
"""

from __future__ import annotations

import re

__all__ = ["ASSIGNMENT", "BEARER", "HEADER", "PRIVATE_KEY", "TOKEN_PATTERNS", "find_secret"]

TOKEN_PATTERNS: tuple[tuple[str, str], ...] = (
    ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    ("an OpenAI API key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("a GitHub token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("a GitLab token", r"glpat-[A-Za-z0-9_\-]{20,}"),
    ("a Slack token", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("a Stripe key", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("an AWS access key id", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("a Google API key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("a Hugging Face token", r"hf_[A-Za-z0-9]{30,}"),
    ("an npm token", r"npm_[A-Za-z0-9]{36}"),
    ("a PyPI token", r"pypi-[A-Za-z0-9_\-]{40,}"),
    ("a JSON Web Token", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)
"""``(what it is, pattern)`` of the providers' API keys and tokens."""

PRIVATE_KEY = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|.*)"  # noqa: E501
"""A private key block (to its end, else to the end of the text)."""

HEADER = r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key)(\"?\s*[:=]\s*\"?)((?:bearer|basic|token)\s+)?[^\s\"',;]+"  # noqa: E501
"""An ``Authorization`` (or API key) header and its value."""

BEARER = r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{12,}=*"
"""A bearer token."""

ASSIGNMENT = (
    r"(?i)\b([A-Z0-9_.\-]*(?:secret|token|passw(?:or)?d|api[_\-]?key|access[_\-]?key|private[_\-]?key"
    r"|credentials?)[A-Z0-9_.\-]*)(\"?\s*[:=]\s*[\"']?)([^\s\"',;]{6,})"
)
"""A value assigned to a name that says it is secret (``API_KEY=…``, ``password: …``)."""

_MARKERS = ("[REDACTED]", "[private]")
"""What redaction writes instead of a secret: an assignment of it is no secret."""

_FOUND: list[tuple[str, re.Pattern[str]]] = []


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    if not _FOUND:
        _FOUND.append(("a private key", re.compile(PRIVATE_KEY, re.DOTALL)))
        _FOUND.append(("an authorization header", re.compile(HEADER)))
        _FOUND.append(("a bearer token", re.compile(BEARER)))
        _FOUND.extend((what, re.compile(rf"(?<![A-Za-z0-9]){p}")) for what, p in TOKEN_PATTERNS)
        _FOUND.append(("a secret assignment", re.compile(ASSIGNMENT)))
    return _FOUND


def find_secret(text: str) -> str | None:
    """What kind of secret ``text`` holds (``"a GitHub token"``), or None when it holds none.

    A header or assignment whose value is redaction's marker holds none.
    """
    for what, pattern in _patterns():
        for match in pattern.finditer(text):
            if not any(marker in match.group(0) for marker in _MARKERS):
                return what
    return None
