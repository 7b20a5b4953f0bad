"""Compacting Chronicle's Markdown: lenient about wording, never dropping content."""

from __future__ import annotations

from karni.agent.history_chronicle.markdown import compact_markdown


def test_an_empty_pack_compacts_to_nothing():
    markdown = (
        "# Context for src/session/cache.ts\n\n"
        "_No captured history shaped this file yet — nothing to brief. Chronicle can only\n"
        "assemble context for work done while capture was running._\n"
    )
    assert compact_markdown(markdown) == ""


def test_crlf_tabs_and_a_missing_footer():
    markdown = (
        "# Context for a.py\r\n\r\n_One-line italic note._\r\n\r\n"
        "## What Shaped This File\r\n\r\n1. unknown\t\tbin  — (prompt text unavailable)\r\n"
        "## Decisions & TODOs from these sessions\r\n- **[todo]** TODO: x  _(agent, unknown)_\r\n"
    )
    assert compact_markdown(markdown) == (
        "## Decisions & TODOs from these sessions\n"
        "- **[todo]** TODO: x _(agent, unknown)_\n"
        "## What Shaped This File\n"
        "1. unknown bin — (prompt text unavailable)"
    )


def test_only_the_last_rule_starts_the_footer_and_text_before_sections_is_kept():
    markdown = (
        "# Context for a.py\n\n"
        "A plain preamble line that is not italic.\n\n"
        "## What shaped this file\n\n1. x\n\n"
        "## Notes\n\n- keep me\n\n---\n_footer line one\nfooter line two_\n"
    )
    assert compact_markdown(markdown) == (
        "A plain preamble line that is not italic.\n## Notes\n- keep me\n"
        "## What shaped this file\n1. x"
    )


def test_without_a_title_nothing_else_is_dropped():
    assert compact_markdown("## What shaped this file\n1. a\n## Why\n- b\n") == (
        "## Why\n- b\n## What shaped this file\n1. a"
    )
