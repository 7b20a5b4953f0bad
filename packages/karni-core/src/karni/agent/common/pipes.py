"""Stopping quietly when the reader of Karni's output goes away (``karni ... | head``)."""

from __future__ import annotations

import os
import sys

__all__ = ["BROKEN_PIPE_EXIT", "stop_on_broken_pipe"]

BROKEN_PIPE_EXIT = 141
"""The exit status a shell reports for a process ended by SIGPIPE (128 + 13)."""


def stop_on_broken_pipe() -> int:
    """Point stdout at the null device and return :data:`BROKEN_PIPE_EXIT`.

    Call it from ``except BrokenPipeError``: with stdout redirected, the
    interpreter's final flush cannot fail again and print a traceback.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return BROKEN_PIPE_EXIT
