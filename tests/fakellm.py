"""A real local HTTP server speaking the OpenAI chat completions API, with scripted replies.

Tests script what the "model" says; the server records every request it received so a
test can assert on the prompt (for example that ``--no-memory`` sent no rules).

    with FakeLLM() as llm:
        llm.script(reply_json({"operations": []}), (429, {"error": "slow down"}, {"Retry-After": "0"}))
        ... SCARWARDEN_BASE_URL=llm.url ...
        llm.requests[0]["body"]["messages"]

A scripted item is one of:
* a ``str``: returned as the assistant message content (200);
* a ``dict``: returned as the whole JSON body (200);
* a tuple ``(status, body[, headers])``: body is a dict (JSON) or str;
* ``Sleep(seconds)``: wait before answering 200 with the next item (timeouts);
* ``Close()``: drop the connection without answering;
* ``Trickle(seconds)``: answer 200 with the next item, sending its body one byte every
  ``seconds`` (a server that keeps a connection alive without finishing its reply);
* a callable ``f(request_body) -> item``.
When the script runs out, the ``default`` item (if set) answers every further call.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Sleep:
    seconds: float
    then: Any = None


@dataclass
class Close:
    pass


@dataclass
class Trickle:
    seconds: float
    then: Any = None


def completion(
    content: str,
    *,
    prompt_tokens: int | None = 100,
    completion_tokens: int | None = 20,
    model: str = "fake-model",
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
        ],
    }
    if prompt_tokens is not None:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + (completion_tokens or 0),
        }
    return body


def reply_json(data: Any, **kwargs: Any) -> dict[str, Any]:
    """A completion whose content is ``data`` serialised as JSON."""
    return completion(json.dumps(data), **kwargs)


class FakeLLM:
    def __init__(self, default: Any = None) -> None:
        self._items: list[Any] = []
        self.default = default
        self.requests: list[dict[str, Any]] = []
        #: What ``GET /v1/models`` lists (the OpenAI model listing); None: 404, as
        #: servers without the listing answer. ``key``: the only accepted Bearer key.
        self.models: list[str] | None = None
        self.key: str | None = None
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                with fake._lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": None})
                if fake.key is not None and self.headers.get("Authorization") != f"Bearer {fake.key}":
                    self._answer((401, {"error": {"message": "Incorrect API key provided"}}), None)
                elif self.path.rstrip("/").endswith("/models") and fake.models is not None:
                    listing = {"object": "list", "data": [{"id": m, "object": "model"} for m in fake.models]}
                    self._answer(listing, None)
                else:
                    self._answer((404, {"error": {"message": f"no route {self.path}"}}), None)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = None
                with fake._lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    item = fake._items.pop(0) if fake._items else fake.default
                self._answer(item, body)

            def _answer(self, item: Any, body: Any) -> None:
                if callable(item) and not isinstance(item, (Sleep, Close, Trickle)):
                    item = item(body)
                trickle = item.seconds if isinstance(item, Trickle) else 0.0
                if isinstance(item, Trickle):
                    item = item.then if item.then is not None else completion("(trickled)")
                if isinstance(item, Sleep):
                    time.sleep(item.seconds)
                    item = item.then if item.then is not None else completion("(late)")
                if isinstance(item, Close):
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                status, payload, headers = 200, item, {}
                if isinstance(item, tuple):
                    status, payload = item[0], item[1]
                    headers = item[2] if len(item) > 2 else {}
                if item is None:
                    status, payload = 500, {"error": {"message": "FakeLLM: script exhausted"}}
                if isinstance(payload, str) and status == 200 and not isinstance(item, tuple):
                    payload = completion(payload)
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    if not trickle:
                        self.wfile.write(data)
                    else:
                        for byte in data:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(trickle)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll interval makes shutdown() (every test teardown) take ~10 ms, not 0.5 s
        # (0.05 s still cost ~40 ms of idle teardown in each of ~150 tests; a wake-up every
        # 10 ms costs microseconds).
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *items: Any) -> FakeLLM:
        with self._lock:
            self._items.extend(items)
        return self

    def bodies(self) -> list[Any]:
        return [r["body"] for r in self.requests]

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


Responder = Callable[[Any], Any]


@contextmanager
def dripped_headers() -> Iterator[str]:
    """A server (its base URL, ``.../v1``) that answers one request with a status line,
    then a header line every 0.08 s, never ending the headers: each line well within a
    read timeout (the tests' 0.4 s), so only a deadline on the whole response ends the
    call."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            while not stop.wait(0.08):
                try:
                    conn.sendall(b"X-Drip: a\r\n")
                except OSError:
                    return

    threading.Thread(target=drip, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    finally:
        stop.set()
        server.close()
