"""A scripted model server on 127.0.0.1, driven through the real SDKs.

``POST /v1/messages`` answers in the Anthropic Messages format and
``POST /v1/chat/completions`` in the OpenAI Chat Completions format. Each
request takes the next scripted step (a reply, an HTTP error, a dropped
connection or a hang) and is recorded with its headers and JSON body.
"""

import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from karni_historian.condense.compartment_writer import emit
from karni_historian.model import Compartment, Fact


@dataclass
class Reply:
    """A 200 answer with ``text`` (a callable gets the request's prompt)."""

    text: object
    truncated: bool = False


@dataclass
class Error:
    """An HTTP error in the wire format of the path."""

    status: int
    message: str = "scripted error"
    kind: str = "api_error"


@dataclass
class Drop:
    """Close the connection without answering."""


@dataclass
class Hang:
    """Answer only after the test ends (the client's timeout fires first)."""


def covering_xml(prompt):
    """Valid historian XML for the ``Messages S-E`` range the prompt names."""
    start, end = map(int, re.search(r"Messages (\d+)-(\d+):", prompt).groups())
    compartment = Compartment(
        start,
        end,
        f"Episode {start}-{end}",
        p1=f"We worked through messages {start} to {end}.",
        p2="We worked.",
        p3="Work.",
        p4="",
        importance=60,
    )
    return emit([compartment], [Fact("CONSTRAINTS", "Never log the API key.")])


def _prompt(path, body):
    if path.endswith("/messages"):
        return "\n".join(m["content"] for m in body["messages"])
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")


def _anthropic(text, truncated, model):
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "max_tokens" if truncated else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def _openai(text, truncated, model):
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length" if truncated else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def _error_body(path, error):
    if path.endswith("/messages"):
        return {"type": "error", "error": {"type": error.kind, "message": error.message}}
    return {"error": {"message": error.message, "type": error.kind, "code": None}}


class FakeModelServer:
    """The server; use as a context manager. ``script`` steps are used in order."""

    def __init__(self):
        self.script = deque()
        self.requests = []
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def queue(self, *steps):
        self.script.extend(steps)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, path, body):
        if not self.script:
            return 500, {"error": {"message": "the fake server has no scripted step left"}}
        step = self.script.popleft()
        if isinstance(step, Error):
            return step.status, _error_body(path, step)
        if isinstance(step, Drop | Hang):
            return step, None
        text = step.text(_prompt(path, body)) if callable(step.text) else step.text
        shape = _anthropic if path.endswith("/messages") else _openai
        return 200, shape(text, step.truncated, body.get("model", ""))

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.requests.append({"path": self.path, "headers": headers, "body": body})
                status, payload = fake._next(self.path, body)
                if isinstance(status, Hang):
                    fake._release.wait(30)
                    return
                if isinstance(status, Drop):
                    self.close_connection = True
                    self.connection.close()
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
