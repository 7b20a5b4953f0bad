"""The timeline page in headless Chromium: it draws without errors, and its file filter works.

The page is opened from a ``file://`` URL, as a person opens it, and driven
through the DevTools protocol (``devtools.py``): the console is watched from
before the page loads (an exception, an error or a refused resource fails
the test), text is typed into the file filter as keystrokes would insert it,
and the DOM is read back. A screenshot is drawn with ``--screenshot``.

Chromium is Debian's ``chromium``; ``scripts/test`` installs it on CI
(``ensure_chromium`` in ``scripts/lib.sh``). Elsewhere, without it, these
tests are skipped; on CI a missing browser fails them.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from devtools import Browser, chromium, screenshot
from karni_historian.brief.timeline_page import timeline_html
from karni_historian.cli import main
from timeline_project import HOSTILE_ID, make_project

VISIBLE_LANES = "[...document.querySelectorAll('.lane')].filter(l => !l.hidden).length"
VISIBLE_EPISODES = (
    "[...document.querySelectorAll('details.episode')]"
    ".filter(d => !d.hidden && !d.closest('article').hidden).length"
)
STATUS = "document.getElementById('filter-status').textContent"
SHAPED = "(p => p.hidden ? null : p.textContent)(document.getElementById('shaped'))"
PWNED = "typeof window.__pwned"
DATA_BLOCK = re.compile(r'<script type="application/json" id="timeline-data">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def program():
    """The Chromium program; CI must have it (scripts/lib.sh installs it), elsewhere skip."""
    found = chromium()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; scripts/test installs it (scripts/lib.sh)")
        pytest.skip("chromium is not installed (/usr/bin/chromium): the page cannot be drawn")
    return found


@pytest.fixture
def page(user_folders, tmp_path, monkeypatch, capsys):
    """The project's timeline page, its file filter preselected on the example's model file."""
    make_project(tmp_path, monkeypatch)
    out = tmp_path / "timeline.html"
    assert main(["timeline", "--html", str(out), "--file", "apps/events/models.py"]) == 0
    capsys.readouterr()
    return out


def opened(browser: Browser, url: str) -> None:
    """Load ``url`` with the console watched from the start; wait until the page is drawn."""
    browser.call("Runtime.enable")
    browser.call("Log.enable")
    browser.call("Page.enable")
    browser.call("Page.navigate", url=url)
    browser.wait_for("document.body && document.body.dataset.ready === 'true'")


def typed(browser: Browser, text: str) -> None:
    """Replace the file filter's text as a person would: focus, select all, type."""
    browser.evaluate("document.getElementById('file-filter').focus()")
    browser.evaluate("document.getElementById('file-filter').select()")
    if text:
        browser.call("Input.insertText", text=text)
    else:
        browser.call(
            "Input.dispatchKeyEvent",
            type="keyDown",
            key="Backspace",
            code="Backspace",
            windowsVirtualKeyCode=8,
        )
        browser.call(
            "Input.dispatchKeyEvent",
            type="keyUp",
            key="Backspace",
            code="Backspace",
            windowsVirtualKeyCode=8,
        )


def test_the_page_draws_without_errors_and_its_file_filter_works(program, page, tmp_path):
    with Browser(program, tmp_path / "profile") as browser:
        opened(browser, page.as_uri())
        # Preselected by --file: the example session only, one of its two episodes.
        assert browser.evaluate("document.getElementById('file-filter').value") == (
            "apps/events/models.py"
        )
        assert browser.evaluate(VISIBLE_LANES) == 1
        assert browser.evaluate(VISIBLE_EPISODES) == 1
        assert browser.evaluate(STATUS) == (
            "1 session and 1 episode touched \u201capps/events/models.py\u201d."
        )
        shaped = browser.evaluate(SHAPED)
        assert shaped.startswith("What shaped apps/events/models.py")
        assert "+10\u22122" in shaped and "+0\u22128" in shaped
        assert browser.evaluate("document.querySelectorAll('#shaped .request').length") == 2

        typed(browser, "")  # everything again
        assert (browser.evaluate(VISIBLE_LANES), browser.evaluate(VISIBLE_EPISODES)) == (2, 3)
        assert browser.evaluate(SHAPED) is None

        typed(browser, "apps/tickets/views.py")  # the hostile session's file
        assert (browser.evaluate(VISIBLE_LANES), browser.evaluate(VISIBLE_EPISODES)) == (1, 1)
        lane = "[...document.querySelectorAll('.lane')].find(l => !l.hidden).dataset.session"
        assert browser.evaluate(lane) == HOSTILE_ID
        assert "<script>window.__pwned = 1</script>" in browser.evaluate(SHAPED)

        typed(browser, "apps")  # a folder: both sessions
        assert browser.evaluate(VISIBLE_LANES) == 2
        # No such path: the files whose path holds the text (views.py, viewsets.py).
        typed(browser, "views")
        assert browser.evaluate(STATUS) == (
            "2 sessions and 2 episodes touched 2 files matching \u201cviews\u201d."
        )
        typed(browser, "no/such/file.py")
        assert browser.evaluate(VISIBLE_LANES) == 0
        nothing = "Nothing in this history touched \u201cno/such/file.py\u201d."
        assert browser.evaluate(STATUS) == nothing

        browser.evaluate("document.getElementById('clear-filter').click()")
        assert browser.evaluate(VISIBLE_LANES) == 2
        # A segment on the axis opens its episode's text.
        browser.evaluate("document.querySelector('.seg:not(.tail)').click()")
        opened_text = "[...document.querySelectorAll('details.episode')].filter(d => d.open)"
        assert browser.evaluate(f"{opened_text}.length") == 1
        assert browser.evaluate(f"{opened_text}[0].querySelector('.episode-text').textContent")

        # Transcript markup stayed text: no element made of it, nothing of it ran.
        assert browser.evaluate(PWNED) == "undefined"
        assert browser.evaluate("document.querySelectorAll('script').length") == 2
        assert browser.evaluate("document.querySelectorAll('img').length") == 0
        hostile_title = f"document.querySelector('#session-{HOSTILE_ID} h2').textContent"
        assert "<script>window.__pwned = 1</script>" in browser.evaluate(hostile_title)
        assert browser.errors() == []

        # A teammate's session (as shared history will bring them) gets its own colour.
        shared = tmp_path / "shared.html"
        (block,) = DATA_BLOCK.findall(page.read_text(encoding="utf-8"))
        data = json.loads(block)
        data["sessions"][0].update(author="Alice Liddell", local=False)
        shared.write_text(timeline_html(data), encoding="utf-8")
        browser.call("Page.navigate", url=shared.as_uri())
        browser.wait_for("document.body && document.body.dataset.ready === 'true'")
        chips = browser.evaluate(
            "[...document.querySelectorAll('.author-chip')]"
            ".map(c => [c.textContent, getComputedStyle(c).backgroundColor])"
        )
        assert chips[0][0] == "AL"
        assert len({colour for _initials, colour in chips}) == 2
        legend = "[...document.querySelectorAll('.legend-group')][1].textContent"
        assert browser.evaluate(legend) == f"Author{data['author']}Alice Liddell"
        assert browser.errors() == []

    shot = tmp_path / "timeline.png"
    screenshot(program, page.as_uri(), shot, tmp_path / "screenshot-profile")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def test_the_console_watch_sees_a_refused_script(program, page, tmp_path):
    """The watch can fail: a page whose script differs from the hash its policy names is refused."""
    broken = tmp_path / "broken.html"
    broken.write_text(page.read_text().replace('"use strict";', '"use strict"; ', 1))
    with Browser(program, tmp_path / "profile") as browser:
        browser.call("Runtime.enable")
        browser.call("Log.enable")
        browser.call("Page.enable")
        browser.call("Page.navigate", url=broken.as_uri())
        browser.wait_for("document.readyState === 'complete'")
        assert browser.evaluate("document.body.dataset.ready") is None
        assert any("Content Security Policy" in error for error in browser.errors())
