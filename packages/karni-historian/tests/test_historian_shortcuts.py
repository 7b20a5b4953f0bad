"""The built-in historian's shortcuts give what the longer ways gave.

The chunk builder's digest, the read-back without a copy, the tier fit without
a cut and the filler pre-check each replace work that was done otherwise; the
tests check them against that work, on varied and random messages.
"""

from __future__ import annotations

import random
import sys
from dataclasses import replace

from karni_historian.condense import extractive, prose
from karni_historian.condense.chunk import build_chunk
from karni_historian.condense.compartment_writer import emit, read_back
from karni_historian.condense.compartment_xml import parse
from karni_historian.condense.extractive import scan, sentences, summarize, summarize_parsed, tiers
from karni_historian.condense.message_text import meaningful_user_text
from karni_historian.model import Compartment, Message, TextPart, ToolPart

_TEXTS = [
    "Add a feature to the parser.",
    "ok",
    "  thanks  ",
    "No, don't touch the CLI.\nAlso keep the API.",
    "<system-reminder>be brief</system-reminder>Now write docs.",
    "<!-- OMO_INTERNAL_INITIATOR -->continue",
    "[SYSTEM DIRECTIVE: MAGIC-CONTEXT compact]",
    "",
    "We'll use sqlite instead of json files. Set the timeout to 30 seconds.",
    "Ünïcode: rename the café module, always.",
    "Let me read /home/me/proj/src/app.py first.",
    "**Done**: committed 1a2b3c4d and fixed the bug.",
]


def _random_session(rng: random.Random) -> list[Message]:
    messages: list[Message] = []
    for ordinal in range(1, rng.randint(2, 50)):
        kind = rng.random()
        texts = tuple(
            TextPart(rng.choice(_TEXTS), ignored=rng.random() < 0.1)
            for _ in range(rng.randint(0, 3))
        )
        if kind < 0.4:
            messages.append(Message(ordinal, "user", texts))
        elif kind < 0.8:
            messages.append(Message(ordinal, "assistant", texts))
        elif kind < 0.95:
            edit = ToolPart("Edit", {"file_path": f"src/f{ordinal % 3}.py"}, "ok", f"c{ordinal}")
            role = rng.choice(["assistant", "user"])
            messages.append(Message(ordinal, role, (*texts, edit)))
        else:
            messages.append(Message(ordinal, "system", texts))
    return messages


def _chunk(messages: list[Message], budget: int = 32_000):
    return build_chunk(
        messages,
        offset=messages[0].ordinal,
        eligible_end=messages[-1].ordinal + 1,
        budget_tokens=budget,
    )


def test_the_digest_holds_each_user_messages_meaningful_text() -> None:
    rng = random.Random(18)
    for _ in range(200):
        messages = _random_session(rng)
        digest = _chunk(messages, budget=rng.choice([60, 32_000])).digest
        assert digest is not None
        assert digest.messages == messages[: len(digest.messages)]
        for message in digest.messages:
            if message.role == "user":
                assert digest.user_texts[message.ordinal] == meaningful_user_text(message)
            else:
                assert message.ordinal not in digest.user_texts


def test_the_historian_reads_the_same_with_and_without_the_digest() -> None:
    rng = random.Random(19)
    for _ in range(150):
        messages = _random_session(rng)
        chunk = _chunk(messages, budget=rng.choice([80, 32_000]))
        without = replace(chunk, digest=None)
        assert summarize_parsed(chunk, messages) == summarize_parsed(without, messages)
        assert summarize(chunk, messages) == summarize(without, messages)


def test_a_digest_of_other_messages_is_not_used() -> None:
    said = [Message(1, "user", (TextPart("Add a parser."),)), Message(2, "assistant", ())]
    other = [Message(1, "user", (TextPart("Write the docs."),)), said[1]]
    chunk = _chunk(said)
    (compartment,) = summarize_parsed(chunk, other).compartments
    assert compartment.title == "Write the docs"


def test_the_built_in_historians_rows_are_read_back_as_they_are() -> None:
    messages = [
        Message(1, "user", (TextPart("Add a parser to src/p.py."),)),
        Message(2, "assistant", (TextPart("Added the parser."),)),
    ]
    chunk = _chunk(messages)
    compartments, facts = extractive.condense(chunk, messages)
    parsed = read_back(compartments, facts, messages_processed=(1, 2))
    assert parsed.compartments[0] is compartments[0]
    assert parsed == parse(emit(compartments, facts, messages_processed=(1, 2)))


def test_rows_that_do_not_read_back_as_they_are_are_copied() -> None:
    rows = [
        Compartment(1, 2, "T", p1=" one ", p2="two", p3="three"),
        Compartment(1, 2, "T", p1="one", p2="two ", p3="three", content="one"),
        Compartment(1, 2, "T", p1="one", p2="two", p3="three", content="one", importance=0),
        Compartment(1, 2, "T", p1="one", p2="two", p3="three", content="one", episode_type=""),
        Compartment(1, 2, "T", p1="one", p2="two", p3="three", content="one", start_date="x"),
    ]
    for row in rows:
        (back,) = read_back([row]).compartments
        assert back is not row
        assert back == parse(emit([row])).compartments[0]


def test_a_tier_whose_sentences_all_fit_needs_no_cap() -> None:
    """What fits is joined as it is, and is never longer than the cap would leave it."""
    rng = random.Random(20)
    words = ["a", "fix", "the parser.", "Commits: abc1234.", "done!", " ", "x" * 30, "why?"]
    fitting = 0
    for _ in range(3000):
        parts = [" ".join(rng.choices(words, k=rng.randint(0, 6))) for _ in range(5)]
        limit = rng.randint(1, 120)
        kept = tiers._once([q for p in parts if p and (q := p.strip())])
        total = sum(map(len, kept)) + 2 * len(kept)
        if kept and kept[0].startswith("Commits: "):
            total += len(kept[0]) + 2
        if not kept or total > limit:
            continue
        fitting += 1
        fitted = tiers._fit(parts, limit)
        assert fitted == tiers._join_stripped(kept)
        assert sentences.cap(fitted, limit) == fitted
    assert fitting > 100


def test_a_tier_says_each_sentence_once() -> None:
    """A title taken from the agent's first sentence is not repeated by the sentences after it."""
    parts = ["The server runs.", "the server runs", "Edited app.ts.", "The server runs!"]
    assert tiers._fit(parts, 400) == "The server runs. Edited app.ts."


def test_every_letter_a_filler_opening_can_start_with_is_pre_checked() -> None:
    openings = ["let me", "i'll", "i am going to", "now", "next i", "first i", "ok", "okay"]
    openings += ["great", "perfect", "good", "excellent", "sure", "alright", "got it"]
    openings += ["understood"]
    filler = prose._re("filler")
    starts = {
        char
        for char in map(chr, range(sys.maxunicode + 1))
        if char.lower() != char.upper() or char.casefold() != char
        for opening in openings
        if filler.match(char + opening[1:])
    }
    assert {"L", "g", "\u017f"} <= starts <= prose._FILLER_STARTS


def test_four_words_tell_a_continuation_as_all_of_them_do() -> None:
    assert max(len(c.split()) for c in sentences._CONTINUATIONS) <= 3
    rng = random.Random(21)
    words = [*sentences._CONTINUATIONS, *sentences._LEADING_ACK, "fix", "the", "a", "pr"]
    for _ in range(3000):
        text = " ".join(rng.choices(words, k=rng.randint(1, 9)))
        said = sentences.words_of(text)
        while len(said) > 1 and said[0] in sentences._LEADING_ACK:
            said = said[1:]
        whole = " ".join(said)
        continues = whole in sentences._CONTINUATION_WORDS or whole.startswith(
            sentences._CONTINUATION_PREFIXES
        )
        assert sentences.opens_as_continuation(text) == continues


def test_a_sentence_without_two_slashes_or_a_tilde_has_no_path_to_shorten() -> None:
    rng = random.Random(22)
    path = prose._re("path")
    found = 0
    for _ in range(5000):
        text = "".join(rng.choices("ab./~_-@+ ", k=rng.randint(1, 14)))
        if path.search(text):
            found += 1
            assert "/" in text and ("~" in text or text.count("/") > 1)
    assert found > 100


def test_filler_is_told_as_its_two_patterns_tell_it() -> None:
    rng = random.Random(23)
    filler, keeps = prose._re("filler"), prose._re("keeps")
    words = ["Let me", "I'll", "Now", "OK", "great", "ſure", "run", "the", "Decided", "FAILED"]
    words += ["instead", "Because", "error", "reverting", "broken", "commits", "passed", "passing"]
    words += ["passes", "pass", "undecided", "errors", "x.", "café"]
    told = 0
    for _ in range(5000):
        sentence = " ".join(rng.choices(words, k=rng.randint(1, 6)))
        expected = bool(filler.match(sentence)) and not keeps.search(sentence)
        assert prose.is_filler(sentence) == expected
        told += expected
    assert told > 100


def test_the_validator_finds_the_lines_ordinals_as_it_did() -> None:
    from karni_historian.condense import compartment_xml
    from karni_historian.condense.chunk import ChunkLine

    rng = random.Random(24)
    for _ in range(500):
        lines, start = [], rng.randint(1, 5)
        for _ in range(rng.randint(0, 6)):
            start += rng.choice([0, 0, 0, 1, 2])
            end = start + rng.randint(-1, 3)
            lines.append(ChunkLine(start, end, "A", "x"))
            start = end + 1
        covered = {o for line in lines for o in range(line.start, line.end + 1)}
        present = compartment_xml._present_ordinals(_Lines(tuple(lines)))
        assert {o for o in range(0, 40) if o in present} == covered


class _Lines:
    def __init__(self, lines: tuple[object, ...]) -> None:
        self.lines = lines


def test_only_a_chunk_for_a_historian_holds_its_messages() -> None:
    from karni_historian.condense.chunk import ChunkBuilder

    messages = _random_session(random.Random(25))
    builder = ChunkBuilder(offset=1, eligible_end=len(messages) + 1, budget_tokens=32_000)
    for message in messages:
        builder.read(message)
    assert builder.chunk().digest is None  # the trigger scan lets each batch go
    assert _chunk(messages).digest is not None


def test_a_user_lines_text_is_its_messages_texts_joined() -> None:
    rng = random.Random(5)
    for _ in range(100):
        messages = _random_session(rng)
        chunk = _chunk(messages, budget=rng.choice([60, 32_000]))
        by_ordinal = {m.ordinal: m for m in messages if rng.random() < 0.9}
        texts = {m.ordinal: meaningful_user_text(m) for m in messages if m.role == "user"}
        for line in chunk.lines:
            joined = " ".join(texts.get(o, "") for o in line.ordinals if o in by_ordinal)
            assert scan._line_text(line, by_ordinal, texts) == (joined or line.body)


def test_a_tool_inputs_path_is_the_first_path_key_holding_a_string() -> None:
    from karni_historian.condense.work_phases import input_path
    from karni_historian.model import PATH_KEYS

    rng = random.Random(9)
    for _ in range(500):
        data = {k: rng.choice(["a/b.py", 3, None, ""]) for k in PATH_KEYS if rng.random() < 0.6}
        found = [data[k] for k in PATH_KEYS if isinstance(data.get(k), str)]
        assert input_path(data) == (found[0] if found else None)
