"""Lines on stdin that are not a JSON-RPC message get a JSON-RPC error, never silence.

The SDK's stdio transport hands such a line to the server as an exception, which the
server logs at debug level and drops: a client whose request could not be read (not
JSON, a batch, a lone surrogate's escape the SDK cannot parse, python-sdk issue 2751)
waited for an answer forever. JSON-RPC 2.0 (section 5.1) answers it: ``-32700`` for a
line that is not JSON, ``-32600`` for JSON that is not a message, under the request's
own ID when one can be read, else under ``null``. A blank line is skipped.
"""

from __future__ import annotations

import json
from contextlib import suppress
from types import TracebackType
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from scarwarden.files.input_policy import encoding_problems_in

#: What every error says to do.
_ONE_PER_LINE = "send one JSON-RPC 2.0 message per line, as UTF-8 JSON"


class AnsweringReadStream:
    """The transport's read stream, minus the unreadable lines: each is answered on
    ``write_stream`` instead of being passed on (the SDK's read-stream protocol)."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:  # the sender's context, read by the SDK's loop
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = error_reply(item)
            if reply is not None:
                with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def error_reply(exc: Exception) -> JSONRPCError | None:
    """The error answering the line ``exc`` was raised for (None: nothing to answer)."""
    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors()
    raw = next((e["input"] for e in errors if e["type"] == "json_invalid"), None)
    if isinstance(raw, str):
        if not raw.strip():
            return None
        try:
            message = json.loads(raw)
            surrogate = next(encoding_problems_in(message), None) is not None
        except ValueError:
            return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({errors[0]['msg']})")
        except RecursionError:  # the SDK's parser stops at ~250 levels, Python's at ~1000
            return _error(None, INVALID_REQUEST, "Invalid request: its JSON is nested too deeply")
        why = errors[0]["msg"]
        if surrogate:
            why = "a \\u escape in it is a lone surrogate, not text (send the character itself)"
        return _error(_request_id(message), INVALID_REQUEST, f"Invalid request: {why}")
    # The union's errors: the message is the input nearest the top that looks like one.
    tops = sorted(
        ("jsonrpc" not in e["input"], len(e["loc"]), i)
        for i, e in enumerate(errors)
        if isinstance(e["input"], (dict, list))
    )
    top = errors[tops[0][2]]["input"] if tops else None
    what = "not a JSON-RPC 2.0 message"
    if isinstance(top, list):
        what = "a batch (MCP takes one message per line)"
    return _error(_request_id(top), INVALID_REQUEST, f"Invalid request: {what}")


def _request_id(message: object) -> str | int | None:
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=f"{message}; {_ONE_PER_LINE}")
    )
