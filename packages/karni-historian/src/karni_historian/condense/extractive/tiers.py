"""The four tiers of an episode's compartment, its objective and its title.

p1 keeps the request, the user's constraints and corrections verbatim, the
agent's key sentences, the files and the commits; p2 the request, decisions,
constraints, the outcome, files and commits; p3 one or two sentences; p4 an
anchor of commit hashes and file names, or nothing. A tier is shortened by
leaving out its less important sentences, never by cutting one
(``docs/historian/validation.md``).
"""

from __future__ import annotations

from karni_historian.condense.extractive.sentences import (
    COMPILED,
    cap,
    has,
    is_ack,
    split_sentences,
    words_of,
)
from karni_historian.condense.extractive.signals import basename, quoted_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.condense.extractive.signals import Episode

__all__ = ["objective_of", "tiers_of", "title_of"]


def objective_of(ep: Episode) -> str:
    """What the episode was about: its request, else its todo item, commit, words or files.

    A request of fewer than three words ("wtf", "vs code") names nothing a
    title can use: the other sources come first then.
    """
    request = ""
    if ep.requests:
        sentences = [s for s in split_sentences(ep.requests[0]) if not is_ack(s)]
        request = sentences[0] if sentences else ep.requests[0]
    if request and len(request.split()) >= 3:
        text = request
    elif ep.topic:
        text = ep.topic
    elif ep.commit_subjects:
        text = ep.commit_subjects[0]
    elif ep.assistant:
        text = ep.assistant[0]
    elif ep.edited:
        text = f"Edited {', '.join(basename(p) for p in ep.edited[:3])}"
    elif request:
        text = request
    elif ep.read:
        text = f"Read {', '.join(basename(p) for p in ep.read[:3])}"
    elif ep.commands:
        text = f"Ran `{quoted_command(ep.commands[0])}`"
    elif ep.fallback:
        text = ep.fallback
    else:
        text = "Tool calls"
    while True:  # until nothing polite opens it: a text that no match or strip changes
        polite = COMPILED.polite.match(text)  # anchored at the start: the one place it can be
        shorter = (text[polite.end() :] if polite else text).strip()
        if shorter == text:
            break
        text = shorter
    return text.rstrip(" ?.!") or text or "Untitled episode"


def title_of(objective: str) -> str:
    """The objective in a few words: the head of "objective: details", at most ~8 words."""
    head, colon, _rest = objective.partition(": ")
    if colon and 2 <= len(head.split()) <= 10:
        objective = head
    words = objective.split()
    if len(words) > 10:
        objective = " ".join(words[:8]) + "…"
    objective = cap(objective, 72)
    return objective[:1].upper() + objective[1:]


def _files_sentence(ep: Episode, limit: int, *, reads: bool) -> str:
    parts = []
    if ep.edited:
        shown = ep.edited[:limit]
        more = f" and {len(ep.edited) - limit} more" if len(ep.edited) > limit else ""
        parts.append(f"Edited {', '.join(shown)}{more}.")
    if reads and ep.read:
        shown = ep.read[:limit]
        more = f" and {len(ep.read) - limit} more" if len(ep.read) > limit else ""
        parts.append(f"Read {', '.join(shown)}{more}.")
    return " ".join(parts)


def _commits_sentence(ep: Episode) -> str:
    if not ep.commits:
        return ""
    return f"Commits: {', '.join(ep.commits)}."


def _key_sentences(ep: Episode, limit: int) -> list[str]:
    """At most ``limit`` of the agent's sentences, decisions, fixes and reverts first, in order."""
    if len(ep.assistant) <= limit:
        return list(ep.assistant)  # every one of them, whichever is marked
    chosen: list[str] = []
    for s in ep.assistant:
        if len(chosen) < limit and (has("decision", s) or has("fix", s) or has("revert", s)):
            chosen.append(s)
    for s in ep.assistant:
        if len(chosen) >= limit:
            break
        if s not in chosen:
            chosen.append(s)
    order = {s: i for i, s in enumerate(ep.assistant)}
    return sorted(chosen, key=lambda s: order.get(s, 0))


def _fit(parts: list[str], limit: int) -> str:
    """Whole sentences within ``limit``: the first and the commits always, then the rest in order.

    A tier is shortened by leaving out its less important sentences, never by
    cutting one in the middle (only a first sentence longer than the limit is).
    """
    parts = _once([q for p in parts if p and (q := p.strip())])
    if not parts:
        return ""
    # Each sentence costs its length and a separator; a first one that is also
    # a commits sentence is counted twice, as it comes twice in the order below.
    total = sum(map(len, parts)) + 2 * len(parts)
    if parts[0].startswith("Commits: "):
        total += len(parts[0]) + 2
    if total <= limit:  # everything fits: joined, it is shorter than the total (no cap)
        return _join_stripped(parts)
    commits = [i for i, p in enumerate(parts) if p.startswith("Commits: ")]
    order = [0, *commits, *(i for i in range(1, len(parts)) if i not in commits)]
    chosen: set[int] = set()
    used = 0
    for i in order:
        cost = len(parts[i]) + 2
        if not chosen or used + cost <= limit:
            chosen.add(i)
            used += cost
    return cap(_join_stripped([p for i, p in enumerate(parts) if i in chosen]), limit)


def _once(sentences: list[str]) -> list[str]:
    """``sentences`` without those that say what an earlier one said (same letters and digits)."""
    seen: set[str] = set()
    kept = []
    for sentence in sentences:
        said = "".join(char for char in sentence.lower() if char.isalnum())
        if said not in seen:
            seen.add(said)
            kept.append(sentence)
    return kept


def _join_stripped(sentences: list[str]) -> str:
    """Non-empty stripped sentences joined, each ended by a full stop unless it has an end."""
    return " ".join([s if s[-1] in '.!?…"' else s + "." for s in sentences])


def tiers_of(ep: Episode, importance: int, objective: str) -> tuple[str, str, str, str]:
    """``(p1, p2, p3, p4)`` of the episode, each within its length (1600, 700, 260, 120)."""
    objective = objective[:1].upper() + objective[1:]
    request = cap(ep.requests[0], 400) if ep.requests else ""
    substantive = [s for s in ep.assistant if len(words_of(s)) >= 4] or ep.assistant
    last = substantive[-1] if substantive else ""
    for sentence in reversed(substantive):  # the last that reports a result, if one does
        if has("result", sentence):
            last = sentence
            break
    outcome = cap(last, 200) if last else ""

    commits = _commits_sentence(ep)
    checks = f"Checks: {'; '.join(ep.runs.values())}." if ep.runs else ""
    stated = ep.prohibitions + ep.rules
    asked = "Continuing" if ep.continued else "Asked"
    p2_parts = [f"{asked}: {cap(objective, 160)}" if ep.requests else cap(objective, 160)]
    if stated:  # (most episodes state nothing and decide nothing: no comprehension to run)
        p2_parts += [f'U: "{cap(s, 160)}"' for s in stated[:2]]
    if ep.decisions:
        p2_parts += [cap(s, 160) for s in ep.decisions[:2] if s not in stated]
    if outcome and outcome not in ep.decisions:
        p2_parts.append(outcome)
    files = _files_sentence(ep, 5, reads=False)
    p2_parts += [files, checks, commits]
    p2 = _fit(p2_parts, 700)

    p1_parts = [f'{asked}: "{request}"' if request else cap(objective, 200)]
    if ep.user_notes:
        p1_parts += [f'U: "{cap(s, 240)}"' for s in ep.user_notes[:6]]
    if ep.assistant:
        p1_parts += [cap(s, 240) for s in _key_sentences(ep, 8)]
    if ep.read or len(ep.edited) > 5:  # else it names the same files
        files = _files_sentence(ep, 10, reads=True)
    p1_parts += [files, checks, commits]
    p1 = _fit(p1_parts, 1600)

    p3_parts = [cap(objective, 120)]
    tail = commits or checks or (cap(outcome, 100) if outcome else "")
    if tail:
        p3_parts.append(tail)
    p3 = _fit(p3_parts, 260)

    anchors = list(ep.commits) + [basename(p) for p in ep.edited[:3]]
    if anchors:
        p4 = cap(", ".join(dict.fromkeys(anchors)), 120)
    elif importance >= 60:
        p4 = cap(objective, 60)
    else:
        p4 = ""
    return p1, p2, p3, p4
