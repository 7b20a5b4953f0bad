"""An MkDocs hook: pages from outside docs/ are included, and links written for GitHub work.

Package READMEs and changelogs live in ``packages/<name>/`` and are written to
be read on GitHub and PyPI. A page whose line is ``--8<-- "packages/x/README.md"``
gets that file's text (a missing file fails the build). Relative links in the
included text, and links in docs pages that leave docs/, are rewritten:

- a target inside docs/ becomes a link relative to the page;
- a package's README or CHANGELOG becomes its page in docs/reference/ or
  docs/changelog/;
- any other file or folder of the repository becomes its URL on GitHub.

A target that does not exist is left as it is, so ``mkdocs build --strict``
still reports it. Code spans and fenced code are never touched.
"""

from __future__ import annotations

import os
import re

from mkdocs.exceptions import PluginError

INCLUDE = re.compile(r'^--8<-- "([^"]+)"\s*$', re.MULTILINE)
LINK = re.compile(r"(\]\()([^)\s#]+)(#[^)\s]*)?((?:\s+\"[^\"]*\")?\))")
CODE_SPAN = re.compile(r"(`+).+?\1")
PACKAGE_PAGES = {"README.md": "reference", "CHANGELOG.md": "changelog"}


def on_page_markdown(markdown, page, config, files):
    root = os.path.dirname(config["config_file_path"])
    docs = os.path.relpath(config["docs_dir"], root)
    page_path = os.path.join(docs, page.file.src_path)
    links = Links(root, docs, page_path, config["repo_url"].rstrip("/"))

    def include(match: re.Match[str]) -> str:
        path = os.path.join(root, match.group(1))
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as error:
            raise PluginError(f"{page_path}: cannot include {match.group(1)}: {error}") from None
        return links.rewrite(text, match.group(1))

    return links.rewrite(INCLUDE.sub(include, markdown), page_path)


class Links:
    """Rewrites the relative links of text that lives at a repository path."""

    def __init__(self, root: str, docs: str, page_path: str, repo_url: str) -> None:
        self.root, self.docs, self.page_path, self.repo_url = root, docs, page_path, repo_url

    def rewrite(self, text: str, source: str) -> str:
        """``text``, read from the repository path ``source``, with its links fixed."""
        lines, fence = [], None
        for line in text.split("\n"):
            opening = re.match(r"^\s*(```+|~~~+)", line)
            if opening and (fence is None or opening.group(1).startswith(fence)):
                fence = opening.group(1) if fence is None else None
            elif fence is None:
                pieces = re.split(r"(`+.+?`+)", line)
                line = "".join(
                    piece if CODE_SPAN.fullmatch(piece) else self._links(piece, source)
                    for piece in pieces
                )
            lines.append(line)
        return "\n".join(lines)

    def _links(self, text: str, source: str) -> str:
        def fix(match: re.Match[str]) -> str:
            target = self.target(match.group(2), source)
            return f"{match.group(1)}{target}{match.group(3) or ''}{match.group(4)}"

        return LINK.sub(fix, text)

    def target(self, link: str, source: str) -> str:
        """Where ``link``, written in the file at ``source``, should point from the page."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", link) or link.startswith("/"):
            return link
        resolved = os.path.normpath(os.path.join(os.path.dirname(source), link))
        page_folder = os.path.dirname(self.page_path)
        if resolved.startswith(self.docs + os.sep):
            return link if source == self.page_path else os.path.relpath(resolved, page_folder)
        folder, name = os.path.split(resolved)
        if os.path.dirname(folder) == "packages" and name in PACKAGE_PAGES:
            package = os.path.basename(folder)
            page = os.path.join(self.docs, PACKAGE_PAGES[name], f"{package}.md")
            if os.path.isfile(os.path.join(self.root, page)):
                return os.path.relpath(page, page_folder)
        full = os.path.join(self.root, resolved)
        if resolved.startswith(os.pardir) or not os.path.exists(full):
            return link  # broken: left for --strict to report
        kind = "tree" if os.path.isdir(full) else "blob"
        return f"{self.repo_url}/{kind}/main/{resolved}"
