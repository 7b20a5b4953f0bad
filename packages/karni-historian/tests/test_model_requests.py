"""The exact request bodies for a fixture chunk: the prompt is part of the product."""

import json

import pytest
from fake_model import FakeModelServer, Reply
from karni_historian.condense.chunk import build_chunk
from karni_historian.condense.models import anthropic_api, claude_code, openai_api
from karni_historian.condense.models.backends import complete
from karni_historian.condense.models.entries import ModelEntry
from karni_historian.condense.models.prompt import (
    PromptContext,
    Reference,
    editor_prompt,
    historian_prompt,
    repair_prompt,
)
from karni_historian.model import Fact, Message, TextPart, ToolPart

MESSAGES = [
    Message(1, "user", (TextPart("Rename total() to subtotal() in shop/cart.py"),)),
    Message(
        2,
        "assistant",
        (
            TextPart("I'll rename it in place."),
            ToolPart("Edit", {"file_path": "shop/cart.py"}, "ok", call_id="t1"),
        ),
    ),
    Message(3, "assistant", (TextPart("Renamed; committed 3f2a9c1 rename total"),)),
    Message(4, "user", (TextPart("Never touch the discount code <please>"),)),
]
CONTEXT = PromptContext(
    [Reference(90, 99, 'Set up "tox" & CI')],
    [Fact("CONSTRAINTS", "Never apply discounts to gift cards.")],
)


def fixture_prompt():
    chunk = build_chunk(MESSAGES, offset=1, eligible_end=5, budget_tokens=32_000)
    return historian_prompt(chunk.text, chunk.start, chunk.end, CONTEXT)


def as_text(body):
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize(
    "entry",
    [
        ModelEntry(model_id="anthropic/claude-haiku-4-5"),
        ModelEntry(model_id="anthropic/claude-sonnet-4-5", reasoning="low", temperature=0.3),
    ],
    ids=["plain", "thinking"],
)
def test_anthropic_body(entry, snapshot_text):
    assert as_text(anthropic_api.request_body(entry, fixture_prompt())) == snapshot_text


@pytest.mark.parametrize(
    "entry",
    [
        ModelEntry(model_id="openai/gpt-5-mini", reasoning="minimal"),
        ModelEntry(model_id="ollama/qwen3:8b", temperature=0.2, max_tokens=4096),
    ],
    ids=["openai", "ollama"],
)
def test_chat_completions_body(entry, snapshot_text):
    assert as_text(openai_api.request_body(entry, fixture_prompt())) == snapshot_text


def test_claude_code_arguments_and_stdin(snapshot_text):
    prompt = fixture_prompt()
    entry = ModelEntry(model_id="claude-code/sonnet")
    text = as_text({"argv": claude_code.arguments(entry, prompt), "stdin": prompt.user})
    assert text == snapshot_text


def test_repair_and_editor_prompts(snapshot_text):
    repair = repair_prompt(fixture_prompt(), "gap before message 3 (expected 2)", "<output/>")
    editor = editor_prompt("<output>draft</output>")
    assert as_text({"repair": repair.user, "editor": [editor.system, editor.user]}) == (
        snapshot_text
    )


@pytest.mark.parametrize(
    ("entry_id", "module", "path"),
    [
        ("anthropic/claude-haiku-4-5", anthropic_api, ""),
        ("openai/gpt-5-mini", openai_api, "/v1"),
        ("openai-compatible/llama", openai_api, "/v1"),
    ],
)
def test_the_sdks_send_exactly_these_bodies(monkeypatch, entry_id, module, path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-000000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0000000000000000")
    with FakeModelServer() as server:
        server.queue(Reply("<output/>"))
        entry = ModelEntry(model_id=entry_id, base_url=server.url + path)
        complete(entry, fixture_prompt())
        assert server.requests[0]["body"] == module.request_body(entry, fixture_prompt())


def test_every_backend_but_the_built_in_one_has_a_call():
    from karni_historian.condense.models.backends import CALLS
    from karni_historian.condense.models.entries import BACKENDS

    assert set(CALLS) == set(BACKENDS) - {"local"}
