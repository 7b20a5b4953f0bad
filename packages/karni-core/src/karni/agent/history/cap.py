"""The ~300-token cap on everything ``--with-history`` appends, and how it cuts.

Tokens are estimated as ``ceil(characters / 4)``, the same approximation the
``karni rules`` budget uses. The cap is shared by every provider together and
enforced here, never by providers: a longer brief is cut at a line boundary and
ends with a line naming the command that prints the full brief.
"""

from __future__ import annotations

__all__ = [
    "CHARS_PER_TOKEN",
    "HISTORY_TOKEN_CAP",
    "BriefBlock",
    "body_room",
    "estimate_tokens",
    "fit_blocks",
    "leading_lines",
]

HISTORY_TOKEN_CAP = 300
"""The cap, in estimated tokens, on the block ``karni context --with-history`` appends."""

CHARS_PER_TOKEN = 4
"""Characters per token in Karni's estimate."""

ELLIPSIS = "…"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def estimate_tokens(text: str) -> int:
    """Estimate the tokens in ``text`` as ``ceil(len(text) / 4)``."""
    return -(-len(text) // CHARS_PER_TOKEN)


def body_room(heading: str, providers: int, max_tokens: int = HISTORY_TOKEN_CAP) -> int:
    """The characters a brief body may use and still never be cut by :func:`fit_blocks`.

    The body is the brief's cleaned lines joined with newlines, the heading
    excluded. Each of ``providers`` blocks is guaranteed at least an equal
    share of the cap (see :func:`fit_blocks`), and pays for its heading and
    two newlines (after the heading, and joining it to the next block) out of
    it. See docs/how-to/write-a-provider.md ("Sizing a brief to its room").
    """
    share = (max_tokens * CHARS_PER_TOKEN + 1) // max(providers, 1)
    return max(0, share - len(heading) - 2)


class BriefBlock:
    """One provider's contribution: its heading and the cleaned lines of its brief.

    ``lines`` is consumed lazily, so a 10 MB brief is only read as far as the
    cap can ever show.
    """

    __slots__ = ("_exhausted", "_iterator", "_lines", "heading", "name", "truncation_line")

    def __init__(
        self,
        name: str,
        heading: str,
        lines: Iterator[str],
        truncation_line: Callable[[bool], str],
    ) -> None:
        """Create a block.

        Args:
            name: The provider's name.
            heading: The ``HISTORY:`` heading line.
            lines: The brief's cleaned, non-blank lines, in order.
            truncation_line: Called with ``True`` for the line that ends a cut
                brief naming the full-brief command, with ``False`` for the
                shorter form without it.
        """
        self.name = name
        self.heading = heading
        self._iterator = lines
        self._lines: list[str] = []
        self._exhausted = False
        self.truncation_line = truncation_line

    def lines_up_to(self, max_chars: int) -> tuple[list[str], bool]:
        """Return the leading lines totalling more than ``max_chars``, or all of them.

        The second item tells whether the brief has lines beyond those returned.
        """
        total = sum(len(line) + 1 for line in self._lines)
        while total <= max_chars and not self._exhausted:
            line = next(self._iterator, None)
            if line is None:
                self._exhausted = True
                break
            self._lines.append(line)
            total += len(line) + 1
        return self._lines, not self._exhausted

    def is_empty(self) -> bool:
        """Whether the brief has no line at all."""
        lines, _ = self.lines_up_to(0)
        return not lines


def _full_length(block: BriefBlock, limit: int) -> int | None:
    """The block's joined length (heading included), or None when over ``limit``."""
    lines, more = block.lines_up_to(limit)
    length = len(block.heading) + sum(len(line) + 1 for line in lines)
    if more or length > limit:
        return None
    return length


def _is_subheading(line: str) -> bool:
    """Whether a brief line introduces the lines after it (``Episodes …, oldest first:``)."""
    return line.endswith(":")


def _shortened(line: str, space: int) -> str | None:
    """``line`` (with its newline) in ``space`` characters, cut with an ellipsis; None if not."""
    if len(line) + 1 <= space:
        return line
    keep = space - 1 - len(ELLIPSIS)
    return line[:keep].rstrip() + ELLIPSIS if keep >= 1 else None


def leading_lines(lines: list[str], room: int) -> list[str]:
    """The leading ``lines`` that fit in ``room`` characters, each paying for its newline."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    return kept


def _kept_lines(lines: list[str], space: int) -> list[str] | None:
    """The leading lines that fit in ``space`` characters, at least one of them content.

    Content is a line that is not a sub-heading: a cut brief never shows its
    sub-headings alone. The first content line is shortened when it must be.
    """
    kept = leading_lines(lines, space)
    content = next((i for i, line in enumerate(lines) if not _is_subheading(line)), None)
    if content is None or any(not _is_subheading(line) for line in kept):
        return kept or ([first] if lines and (first := _shortened(lines[0], space)) else None)
    prefix: list[str] = []
    used = 0
    for line in lines[:content]:
        if used + len(line) + 1 + 1 + len(ELLIPSIS) + 1 > space:
            break
        prefix.append(line)
        used += len(line) + 1
    last = _shortened(lines[content], space - used)
    return None if last is None else [*prefix, last]


def _render_cut(block: BriefBlock, room: int) -> list[str] | None:
    """The block cut to fit in ``room`` characters, or None when nothing useful fits."""
    lines, _ = block.lines_up_to(room)
    for with_command in (True, False):
        marker = block.truncation_line(with_command)
        fixed = len(block.heading) + 1 + len(marker)
        if fixed + 2 > room:  # heading, a line of at least "x…", marker, newlines
            continue
        kept = _kept_lines(lines, room - fixed)
        if kept is None:
            continue
        return [block.heading, *kept, marker]
    return None


def fit_blocks(blocks: list[BriefBlock], max_tokens: int = HISTORY_TOKEN_CAP) -> list[str]:
    r"""Join the blocks' lines under the cap, cutting the ones that do not fit.

    Blocks that fit whole are kept whole. The rest share what is left fairly
    (max-min: nobody gets more than it needs, the others split the remainder
    equally), in the given order; slack a cut block leaves at a line boundary
    passes to the next one.

    Returns:
        The output lines; joined with ``\\n`` they are at most
        ``max_tokens * 4`` characters.
    """
    capacity = max_tokens * CHARS_PER_TOKEN + 1  # each block also pays one joining newline
    blocks = [block for block in blocks if not block.is_empty()]
    while blocks:
        needs = [_full_length(block, capacity) for block in blocks]
        shares = _fair_shares([capacity if n is None else n + 1 for n in needs], capacity)
        out: list[str] = []
        slack = 0
        dropped = None
        for block, need, share in zip(blocks, needs, shares, strict=True):
            if need is not None and need + 1 <= share + slack:
                lines, _ = block.lines_up_to(need)
                rendered = [block.heading, *lines]
                slack += share - (need + 1)
            else:
                cut = _render_cut(block, share + slack - 1)
                if cut is None:
                    dropped = block
                    break
                rendered = cut
                slack += share - (sum(len(line) + 1 for line in cut))
            out.extend(rendered)
        if dropped is None:
            return out
        blocks = [block for block in blocks if block is not dropped]
    return []


def _fair_shares(needs: list[int], capacity: int) -> list[int]:
    """Max-min fair split of ``capacity`` over ``needs``, in the order given."""
    shares = [0] * len(needs)
    pending = sorted(range(len(needs)), key=lambda i: needs[i])
    remaining = capacity
    while pending:
        equal = remaining // len(pending)
        index = pending[0]
        if needs[index] <= equal:
            shares[index] = needs[index]
            remaining -= needs[index]
            pending.pop(0)
            continue
        extra = remaining - equal * len(pending)
        for position, i in enumerate(sorted(pending)):
            shares[i] = equal + (1 if position < extra else 0)
        break
    return shares
