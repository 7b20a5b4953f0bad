"""What a user's prompt is: a request, a follow-up of one, a correction, or a command.

A file's notes need the request that led to an edit, the user's words when
they reject an attempt, and the rules they state. Prompts are short and
informal, and often carry pasted terminal output; this module reads them:

- :func:`prompt_kind` tells a real request from a bare continuation
  ("continue", "yes, do it"), a correction ("no, …", "i undid your
  changes"), and a harness command typed without arguments (``/model``);
- :func:`without_pasted_output` drops the terminal output, stack traces and
  screenshot paths pasted into a prompt;
- :func:`constraints` finds the sentences that state a rule or a value
  ("invalid themes must NEVER explode", "accent #8abeb7").
"""

from __future__ import annotations

import re

from karni_historian.cut import shorten
from karni_historian.prompts import SCENE_WORDS, first_word

__all__ = [
    "CONTINUATION",
    "CORRECTION",
    "LOCAL",
    "REQUEST",
    "constraints",
    "pasted_error",
    "prompt_kind",
    "says_undone",
    "user_words",
    "without_pasted_output",
]

REQUEST = "request"
CONTINUATION = "continuation"
CORRECTION = "correction"
LOCAL = "local"

_GO_ON = frozenset(
    [
        "ok",
        "okay",
        "k",
        "yes",
        "yep",
        "yeah",
        "yup",
        "sure",
        "please",
        "pls",
        "continue",
        "go",
        "on",
        "ahead",
        "proceed",
        "do",
        "it",
        "that",
        "keep",
        "going",
        "carry",
        "resume",
        "next",
        "lgtm",
        "sounds",
        "good",
        "great",
        "fine",
        "cool",
        "alright",
        "right",
        "thanks",
        "thank",
        "you",
        "thx",
        "ty",
        "now",
        "and",
        "then",
        "same",
        "again",
        "all",
        "both",
        "everything",
    ]
)
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|hm+|hmm+|well|so|alright|yeah|yes|right|oh|ah|omfg|omg|wtf|dude|"
    r"my dude|man|sorry|actually|also|and|but|wait|please|pls)\b[\s,.!:;-]*)+",
    re.I,
)
_CORRECTION = re.compile(
    r"^(?:no\b|nope\b|nah\b|not\b|wrong\b|don'?t\b|do not\b|stop\b|undo\b|revert\b|"
    r"roll ?back\b|that'?s (?:not|wrong)|this (?:is|was) (?:not|wrong)|that (?:is|was) not|"
    r"still\b|instead\b|why did you|you (?:broke|fucked|messed|screwed|deleted|removed)|"
    r"(?:it|this|that) (?:broke|exploded|crashed|fails|failed|doesn'?t|does not|didn'?t)|"
    r"doesn'?t work|does not work|didn'?t work|are you (?:\w+ )?stupid)",
    re.I,
)
_UNDONE = re.compile(
    r"\b(?:i (?:undid|reverted|rolled back|removed) (?:your|the|that|this|those|it)\b|"
    r"(?:undo|revert|roll back) (?:that|this|it|your|the change)\b|you can undo)",
    re.I,
)
_COMMAND = re.compile(r"^/[\w:.-]+$")
_PASTED = re.compile(
    r"\s*(?:➜|❯|\$ |>>> |at [\w.<>$]+ \(|at /|File \"|Traceback|Debugger attached|Waiting for|"
    r"\[[\w-]+\] |npm (?:warn|ERR)|\d+ \||\+ ?\d+(?: |$)|- ?\d+(?: [-+] |$))|"
    r"\s*['\"]?/(?:var|tmp|Users|home|private)/.*\.(?:png|jpe?g|gif|webp)['\"]?\s*$"
)
"""How a line of pasted output starts (matched at the line's start), or a screenshot's path."""
_BOX = re.compile("[─━│┃╭╮╰╯]{2,}")
"""Box drawing anywhere in a line: a terminal's frame, pasted."""
_CUE = re.compile(
    r"\b(?:must|never|always|don'?t|do not|should(?:n'?t| not)?|keep\b|without|only|make sure|"
    r"instead of|not allowed|avoid|has to|have to|needs? to be|required|no (?:need|more)?\s*\w+!|"
    r"no \w+ \w+s?\b(?=[!.]|$))",
    re.I,
)
_VALUE = re.compile(
    r"#[0-9a-f]{3,8}\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6}\b|\b\d{3,}\b|"
    r"\b\d+(?:\.\d+)?\s?(?:%|ms|s|px|kb|mb)\b|>\s?\d+",
    re.I,
)
_ERROR_LINE = re.compile(r"\b(?:\w*Error|error|ERROR|FAILED|failed|panic)\b[:\s]")


_WORD = re.compile(r"[a-z']+")

_UNDONE_WORDS = ("und", "revert", "roll", "removed")
"""Every phrasing :data:`_UNDONE` knows holds one of these (lower case)."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _undone(text: str) -> bool:
    """Whether ``text`` says the agent's change was or must be undone (:data:`_UNDONE`)."""
    lowered = text.lower()
    return any(word in lowered for word in _UNDONE_WORDS) and bool(_UNDONE.search(text))


def prompt_kind(text: str) -> str:
    """:data:`REQUEST`, :data:`CONTINUATION`, :data:`CORRECTION` or :data:`LOCAL` for a prompt."""
    stripped = text.strip()
    if not stripped or _COMMAND.match(stripped):
        return LOCAL
    plain = without_pasted_output(stripped)
    words = _words(plain)
    if words and len(words) <= 6 and all(word in _GO_ON for word in words):
        return CONTINUATION
    if _undone(plain) or _CORRECTION.match(_LEAD.sub("", plain)):
        return CORRECTION
    return REQUEST if words or _VALUE.search(plain) else LOCAL


def says_undone(text: str) -> bool:
    """Whether the user says they undid the agent's change, or asks for it to be undone."""
    return _undone(text)


def _lines(text: str) -> list[tuple[str, bool]]:
    """Each line of ``text``, and whether it was pasted (from a line that looks it to a blank)."""
    marked = []
    pasting = False
    for line in text.splitlines():
        if not line.strip():
            pasting = False
        elif _PASTED.match(line) or _BOX.search(line):
            pasting = True
        marked.append((line, pasting))
    return marked


_PLAIN: dict[str, str] = {}
"""Each prompt's text without pasted output: a prompt is read so when it is classified, and again
for each file its request edited."""


def without_pasted_output(text: str) -> str:
    """``text`` without the lines that are pasted terminal output, traces or screenshot paths."""
    found = _PLAIN.get(text)
    if found is None:
        if len(_PLAIN) >= 1024:
            _PLAIN.clear()
        found = _PLAIN[text] = _without_pasted_output(text)
    return found


def _without_pasted_output(text: str) -> str:
    kept = []
    for line, pasted in _lines(text):
        if pasted:
            continue
        if "➜" in line:
            line = line[: line.index("➜")]
        kept.append(line)
    return "\n".join(kept).strip()


def pasted_error(text: str) -> str:
    """The first error line of the output pasted into a prompt, or ``""``."""
    for line, pasted in _lines(text):
        if pasted and _ERROR_LINE.search(line) and not line.lstrip().startswith("at "):
            return " ".join(line.split())
    return ""


def user_words(text: str, limit: int) -> str:
    """The user's own words on one line, past any opening filler, cut to ``limit``."""
    plain = " ".join(without_pasted_output(text).split())
    plain = _LEAD.sub("", plain) or plain
    return shorten(plain, limit)


def _sentences(text: str) -> list[str]:
    pieces: list[str] = []
    for line in text.splitlines():
        pieces += [p.strip() for p in re.split(r"(?<=[.!?])\s+|\s+(?=-\s)", line) if p.strip()]
    return pieces


def constraints(text: str) -> list[str]:
    """The sentences of a prompt that state a rule or give values, in the user's words.

    A prompt made only of ``name value`` lines (colours, sizes) is one
    constraint, its lines joined by ``; ``.
    """
    plain = without_pasted_output(text)
    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    if len(lines) > 1 and sum(bool(_VALUE.search(line)) for line in lines) >= len(lines) - 1:
        return ["; ".join(lines)]
    found = []
    for sentence in _sentences(plain):
        words = _words(sentence)
        if len(words) < 3 and not _VALUE.search(sentence):
            continue
        if _CUE.search(sentence) or (_VALUE.search(sentence) and _gives_value(sentence)):
            found.append(_LEAD.sub("", sentence) or sentence)
    return found


_GIVES = re.compile(r"[:=]|\b(?:is|are|be|was|equals?|defaults?|set|use|make|at|to)\b", re.I)
"""Words that give a value (``md link is 666666``, ``timeout: 300 ms``, ``set it to 500``)."""

_REPORTS = SCENE_WORDS | {"we", "i"}
"""First words of a sentence that may only report what happened (``We got 404 …``). A quoted
request may open with "I" or "we" and ask (``I want a cache.``), so the brief leaves them out."""


def _gives_value(sentence: str) -> bool:
    """Whether a sentence holding a value gives it, rather than reports a number it saw.

    ``Quote fields per RFC 4180`` and ``md link is actually 666666`` give one;
    ``Our client keeps getting HTTP 429 from the API.`` only describes what
    happened: it opens as a description and no word in it gives a value.
    """
    if len(sentence.split()) < 2:
        return False
    return first_word(sentence) not in _REPORTS or bool(_GIVES.search(sentence))
