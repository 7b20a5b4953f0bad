"""Headless Chromium, driven through the DevTools protocol with the standard library only.

The timeline's browser test needs to load a page, watch its console, type
into it and read its DOM. Chromium listens on a loopback port it picks
itself (``--remote-debugging-port=0``) and writes it to ``DevToolsActivePort``
in its profile folder; the page's WebSocket is found through ``/json/list``,
and this module speaks just enough of RFC 6455 (masked text frames out,
unmasked frames in, pings answered) to call methods and collect events.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
"""Debian's ``chromium`` (``scripts/lib.sh``'s ``ensure_chromium`` installs it)."""

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1600",
]
"""Chromium's flags for a quiet, offline, single-use headless run."""


OTHER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""Where else the browser may be found on ``PATH`` (a CI image may ship Google Chrome)."""


def chromium() -> str | None:
    """The Chromium program, or None when it is not installed."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return next(filter(None, map(shutil.which, OTHER_NAMES)), None)


def _start(arguments: list[str]) -> subprocess.Popen[bytes]:
    """Start Chromium in a process group of its own, so that :func:`_stop` ends all of it."""
    return subprocess.Popen(
        arguments,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the Chromium this module started, with its renderers and helpers, and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=30)


def screenshot(program: str, url: str, out: Path, profile: Path, timeout: float = 60) -> None:
    """Draw ``url`` into the PNG ``out`` with ``--screenshot``."""
    process = _start([program, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={out}", url])
    try:
        code = process.wait(timeout=timeout)
    finally:
        _stop(process)
    if code != 0:
        raise RuntimeError(f"chromium --screenshot exited with {code}")


class Browser:
    """A headless Chromium with one page, open as a ``with`` block (the browser is killed after)."""

    def __init__(self, program: str, profile: Path, timeout: float = 60) -> None:
        """Prepare the browser; it starts in ``__enter__``."""
        self.program = program
        self.profile = profile
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.socket: socket.socket | None = None
        self.events: list[dict[str, Any]] = []
        self._buffer = b""
        self._next_id = 0

    def __enter__(self) -> Browser:
        self.profile.mkdir(parents=True, exist_ok=True)
        self.process = _start(
            [
                self.program,
                *FLAGS,
                f"--user-data-dir={self.profile}",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                "about:blank",
            ]
        )
        try:
            port = self._port()
            self._connect(port, self._page_path(port))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.socket is not None:
            self.socket.close()
        if self.process is not None:
            _stop(self.process)

    # Finding the page ------------------------------------------------------------------

    def _deadline_passed(self, start: float, what: str) -> None:
        if time.monotonic() - start > self.timeout:
            raise TimeoutError(f"chromium: no {what} after {self.timeout} s")
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"chromium exited with {self.process.returncode} before {what}")

    def _port(self) -> int:
        """The DevTools port Chromium wrote to its profile folder."""
        start = time.monotonic()
        active = self.profile / "DevToolsActivePort"
        while True:
            lines = active.read_text().splitlines() if active.exists() else []
            if lines and lines[0].isdigit():
                return int(lines[0])
            self._deadline_passed(start, "DevToolsActivePort")
            time.sleep(0.05)

    def _page_path(self, port: int) -> str:
        """The WebSocket path of the browser's page."""
        start = time.monotonic()
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=self.timeout)
            try:
                connection.request("GET", "/json/list")
                targets = json.loads(connection.getresponse().read())
            except (OSError, ValueError):
                targets = []
            finally:
                connection.close()
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                url = pages[0]["webSocketDebuggerUrl"]
                return "/" + url.split("/", 3)[3]
            self._deadline_passed(start, "page target")
            time.sleep(0.05)

    def _connect(self, port: int, path: str) -> None:
        """Open the WebSocket (the HTTP upgrade of RFC 6455)."""
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=self.timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.socket.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.socket.recv(4096)
            if not chunk:
                raise ConnectionError("chromium closed the DevTools connection")
            head += chunk
        head, self._buffer = head.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(f"chromium refused the WebSocket: {head[:80]!r}")

    # Frames ----------------------------------------------------------------------------

    def _send(self, opcode: int, payload: bytes) -> None:
        assert self.socket is not None
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        mask = os.urandom(4)
        masked = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
        self.socket.sendall(head + mask + masked)

    def _read(self, count: int) -> bytes:
        assert self.socket is not None
        while len(self._buffer) < count:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("chromium closed the DevTools connection")
            self._buffer += chunk
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def _message(self) -> dict[str, Any]:
        """The next whole text message (continuation frames joined; pings answered)."""
        parts: list[bytes] = []
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if second & 0x80 else b""
            payload = self._read(length)
            if mask:
                payload = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
            opcode = first & 0x0F
            if opcode == 0x9:
                self._send(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError("chromium closed the DevTools connection")
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if first & 0x80:
                    return json.loads(b"".join(parts))

    # The protocol ----------------------------------------------------------------------

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Call a DevTools method and return its result; events met meanwhile are kept."""
        self._next_id += 1
        number = self._next_id
        self._send(0x1, json.dumps({"id": number, "method": method, "params": params}).encode())
        while True:
            message = self._message()
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (thrown errors raise here)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> Any:
        """Evaluate ``expression`` until it is truthy; its value."""
        start = time.monotonic()
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() - start > self.timeout:
                raise TimeoutError(f"still false after {self.timeout} s: {expression}")
            time.sleep(0.05)

    def errors(self) -> list[str]:
        """What the console and the page reported as errors so far: exceptions, errors, refusals."""
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif event["method"] == "Runtime.consoleAPICalled" and params["type"] in (
                "error",
                "assert",
                "warning",
            ):
                found.append(json.dumps(params["args"])[:500])
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] in (
                "error",
                "warning",
            ):
                found.append(params["entry"]["text"][:500])
        return found
