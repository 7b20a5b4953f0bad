"""What ``run -v``, ``wrapup -v`` and ``recomp -v`` tell: each chunk, each call, timed.

:class:`TracedHistorian` stands in for a run's historian hook: it names the
chunk it is given, times the historian's answer, and, for a model-backed
historian, every model call of it (retries, repairs and the editor pass
included). It changes nothing the run records: its ``name`` and
``last_model`` are those of the historian it wraps.
"""

from __future__ import annotations

import time

from karni_historian.condense.extractive import summarize, summarize_parsed
from karni_historian.condense.runner import historian_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from karni_historian.condense.compartment_xml import ParsedOutput
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.model import Message

__all__ = ["TracedHistorian"]


class TracedHistorian:
    """A historian hook that writes one line per chunk and per model call."""

    def __init__(self, inner: Any, write: Callable[[str], None]) -> None:
        """Wrap ``inner`` (a hook, or None for the built-in); lines go to ``write``."""
        self.inner = inner
        self.name = historian_name(inner)
        self._write = write
        if inner is not None and hasattr(inner, "on_call"):
            inner.on_call = self._model_call

    @property
    def last_model(self) -> str | None:
        """The model that answered the last chunk, when the wrapped historian says."""
        model = getattr(self.inner, "last_model", None)
        return model if isinstance(model, str) else None

    @property
    def summarize_parsed(self) -> Callable[[Any, Sequence[Message]], ParsedOutput] | None:
        """For the built-in historian, its parsed answer, told as :meth:`__call__` tells its XML.

        The run takes the built-in historian's compartments without writing
        and parsing their XML (:func:`karni_historian.condense.extractive.summarize_parsed`);
        traced, it still does. None for any other historian.
        """
        if self.inner is not None:
            return None

        return lambda chunk, messages: self._told(summarize_parsed, chunk, messages)

    def __call__(self, chunk: Any, messages: Sequence[Message]) -> str:
        """The wrapped historian's XML for ``chunk``, with the chunk and its time told."""
        xml: str = self._told(self.inner or summarize, chunk, messages)
        return xml

    def _told(self, historian: Callable[..., Any], chunk: Any, messages: Sequence[Message]) -> Any:
        """``historian(chunk, messages)``, with the chunk, the answer and its time told."""
        self._write(
            f"chunk messages {chunk.start}-{chunk.end}: {len(chunk.text)} characters,"
            f" {chunk.end - chunk.start + 1} message(s)"
        )
        span = f"chunk messages {chunk.start}-{chunk.end}"
        started = time.monotonic()
        try:
            answer = historian(chunk, messages)
        except Exception:
            self._write(f"{span}: {self.name} failed after {_seconds(started)}")
            raise
        self._write(f"{span}: answered by {self.last_model or self.name} in {_seconds(started)}")
        return answer

    def _model_call(
        self, entry: ModelEntry, attempt: int, seconds: float, error: str | None
    ) -> None:
        outcome = "ok" if error is None else f"failed ({error})"
        self._write(f"model call {entry.model_id}, attempt {attempt}: {outcome} in {seconds:.2f} s")


def _seconds(started: float) -> str:
    return f"{time.monotonic() - started:.2f} s"
