"""The errors karni-historian raises, in one small hierarchy.

Every error the package raises on purpose derives from :class:`HistorianError`,
so a tool built on the historian can catch them all at once, and every message
is one line that names the thing at fault and says how to fix it. Each class
is also importable from the module that raises it (for example
``karni_historian.templates.TemplateError``), which is where its documentation
points; this module only keeps them together and import-free, so the pure
modules can share them without importing each other.

::

    HistorianError
    ├── ConfigurationError          (also a ValueError)
    │   └── TemplateError           an invalid ``expand_tools`` template
    ├── HistorianOutputError        (also a ValueError) historian XML that cannot be published
    ├── ChunkCoverageError          (also a ValueError) a chunk that does not cover its range
    ├── RecompError                 a ``recomp`` range that cannot be rebuilt
    ├── StoreError                  the store is missing, unreadable or too new
    ├── IngestError                 a ``--from`` path that does not exist or cannot be read
    ├── BlameError                  a file ``blame`` cannot ask git about
    ├── QueryError                  (also a ValueError) a search query the index cannot read
    ├── SharedFileProblem           a file under ``.karni/history/`` that cannot be used
    ├── ShareError                  a session ``share`` refuses or cannot write
    └── ModelError                  a historian model could not be used
        ├── ModelCallError          one call failed (transient or permanent)
        └── ChainExhaustedError     every model of the chain failed: the run fails
"""

from __future__ import annotations

__all__ = [
    "BlameError",
    "ChainExhaustedError",
    "ChunkCoverageError",
    "ConfigurationError",
    "HistorianError",
    "HistorianOutputError",
    "IngestError",
    "ModelCallError",
    "ModelError",
    "QueryError",
    "RecompError",
    "ShareError",
    "SharedFileProblem",
    "StoreError",
    "TemplateError",
]


class HistorianError(Exception):
    """Base class of every error karni-historian raises on purpose."""


class ConfigurationError(HistorianError, ValueError):
    """A historian setting is missing, malformed or out of range.

    Raised with a one-line message naming the setting in backticks and saying
    how to fix it; command-line front ends print it and exit non-zero.
    """


class TemplateError(ConfigurationError):
    """A tool expansion template does not follow the grammar (``docs/historian/templates.md``).

    Raised by :func:`karni_historian.templates.compile_template` and
    :func:`karni_historian.templates.expand`. The message is exactly
    ``Invalid tool expansion template at character N`` (N is 1-based; inside
    an ``.each("…")`` string it counts from the start of that string). It is a
    :class:`ConfigurationError` because templates come from configuration;
    :func:`karni_historian.templates.resolve_templates` re-raises it as a plain
    :class:`ConfigurationError` that also names the key and the file tier.

    Attributes:
        position: The 1-based character position of the failure.
    """

    def __init__(self, position: int) -> None:
        """Create the error for the 1-based ``position``."""
        self.position = position
        super().__init__(f"Invalid tool expansion template at character {position}")


class HistorianOutputError(HistorianError, ValueError):
    """The historian's XML cannot be published.

    Raised by :func:`karni_historian.condense.compartment_xml.validate` with the
    texts of ``docs/historian/validation.md``, for example ``Historian returned no usable
    compartments.``. A run that meets it records a historian failure and leaves
    the store as it was.
    """


class ChunkCoverageError(HistorianError, ValueError):
    """The chunk's lines do not cover its range consecutively (``docs/historian/chunk.md``).

    Raised by :func:`karni_historian.condense.chunk.check_coverage`; a historian run that
    meets it records a failure instead of calling the historian.
    """


class RecompError(HistorianError):
    """A ``recomp`` range that cannot be rebuilt; the message names it and the fix."""


class StoreError(HistorianError):
    """The store cannot be opened or used: missing, unreadable, or from a newer version."""


class IngestError(HistorianError):
    """A ``--from`` path that does not exist or cannot be read."""


class QueryError(HistorianError, ValueError):
    """A search query (or one of its filters) that cannot be used; the message says why."""


class ModelError(HistorianError):
    """A historian model could not turn a chunk into publishable XML.

    Messages never hold a credential: they pass through the redaction of
    :mod:`karni_historian.condense.models.redaction` before they are raised.
    """


class ModelCallError(ModelError):
    """One call to a historian model failed.

    Raised by the backends of :mod:`karni_historian.condense.models`; the
    chain catches it and decides what comes next.

    Attributes:
        transient: True for rate limits, overload, 5xx, timeouts and dropped
            connections (retried on the same model with backoff); False for
            bad requests, authentication, unknown models and a missing SDK
            (the chain moves to its next model).
        raw: The raw response body, when the model answered at all.
        status: The HTTP status (or the process exit code), when known.
    """

    def __init__(
        self, message: str, *, transient: bool, raw: str = "", status: int | None = None
    ) -> None:
        """Create the error."""
        super().__init__(message)
        self.transient = transient
        self.raw = raw
        self.status = status


class ChainExhaustedError(ModelError):
    """Every model of the configured chain failed, so the run fails.

    Never followed by a silent switch to another model: the message names
    the last error and the dump kept for it (``.karni/local/historian-dumps/``).

    Attributes:
        dump: The path of the newest failure dump, when one was written.
    """

    def __init__(self, message: str, *, dump: str | None = None) -> None:
        """Create the error."""
        super().__init__(message)
        self.dump = dump


class BlameError(HistorianError):
    """``git blame`` cannot answer for a file: no git, no repository, not tracked, bad lines.

    Raised by :func:`karni_historian.blame.git.blame_lines` with one line naming
    the file (or the folder) and what to do; ``karni-historian blame`` prints
    it and exits 1.
    """


class SharedFileProblem(HistorianError):
    """A shared history file (``.karni/history/``) that cannot be used; the message is why.

    Raised by :func:`karni_historian.ingest.shared_format.parse`; the file is
    skipped and ``karni doctor`` names it with this line.
    """


class ShareError(HistorianError):
    """``share`` refuses a session (a secret left after redaction) or cannot write its file."""
