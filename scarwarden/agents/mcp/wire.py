"""Lines on stdin that are not a JSON-RPC message get a JSON-RPC error, never silence.

The SDK's stdio transport hands such a line to the server as an exception, which the
server logs at debug level and drops: a client whose request could not be read (not
JSON, a batch, a lone surrogate's escape the SDK cannot parse, python-sdk issue 2751)
waited for an answer forever. JSON-RPC 2.0 (section 5.1) answers it: ``-32700`` for a
line that is not JSON, ``-32600`` for JSON that is not a message, under the request's
own ID when one can be read, else under ``null``. A blank line is skipped.

Stdin's end is also the end of the requests, not of their answers: the SDK cancels the
requests in flight when its read stream ends, so ``printf '...' | scarwarden mcp`` got
the handshake's answer and none other. Here the read stream ends only once every request
passed on has been answered (or cancelled by the client); MCP's stdio shutdown (the
client closes stdin, then waits for the server to exit) stays the same.

Scarwarden reads stdin's lines itself (:class:`.streams.StdinLines`), as bytes, and
hands the SDK their text: a line ends at a newline only (MCP's stdio framing), where the
SDK's text stream also cut one at a carriage return, which JSON reads as whitespace; and
a line that is not UTF-8 is answered, where the SDK's decoding made each bad byte U+FFFD
and served the request (``record_episode`` committed the U+FFFD to the ledger). A byte
order mark before a message is skipped (the SDK answered it as a parse error).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, deque
from contextlib import suppress
from types import TracebackType
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

from scarwarden.errors import clipped
from scarwarden.files.input_policy import encoding_problems_in

#: What every error says to do.
_ONE_PER_LINE = "send one JSON-RPC 2.0 message per line, as UTF-8 JSON"


class Unanswered:
    """The requests passed on to the server and not yet answered, by ID (the SDK's
    correlation: ``7``, ``"7"`` and ``"07"`` are one ID); set when there are none."""

    def __init__(self) -> None:
        self._ids: Counter[object] = Counter()
        self._none = anyio.Event()
        self._none.set()

    def asked(self, request_id: object) -> None:
        if not self._ids:
            self._none = anyio.Event()
        self._ids[_key(request_id)] += 1

    def pending(self, request_id: object) -> bool:
        return _key(request_id) in self._ids

    def settled(self, request_id: object) -> None:
        key = _key(request_id)
        if self._ids[key] > 1:
            self._ids[key] -= 1
            return
        self._ids.pop(key, None)
        if not self._ids:
            self._none.set()

    def dropped(self, request_id: object) -> None:
        """A request the client cancelled: the SDK never answers it."""
        self._ids.pop(_key(request_id), None)
        if not self._ids:
            self._none.set()

    async def wait(self) -> None:
        await self._none.wait()


def _key(request_id: object) -> object:
    """``request_id`` as the SDK correlates it: a string that is an integer is that
    integer (kept an integer: one of over 4,300 digits has no ``str``)."""
    if isinstance(request_id, str):
        with suppress(ValueError):
            return int(request_id)
    return request_id


class AnsweringWriteStream:
    """The transport's write stream, counting each request's answer off
    :class:`Unanswered`."""

    def __init__(self, inner: Any, unanswered: Unanswered) -> None:
        self._inner = inner
        self._unanswered = unanswered

    async def send(self, item: SessionMessage) -> None:
        try:
            await self._inner.send(item)
        finally:
            message = item.message
            if isinstance(message, (JSONRPCResponse, JSONRPCError)) and message.id is not None:
                self._unanswered.settled(message.id)

    def __getattr__(self, name: str) -> Any:  # aclose, clone, statistics...: the stream's own
        return getattr(self._inner, name)

    async def __aenter__(self) -> AnsweringWriteStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._inner.__aexit__(exc_type, exc, tb)


class AnsweringReadStream:
    """The transport's read stream, minus the unreadable lines: each is answered on
    ``write_stream`` instead of being passed on (the SDK's read-stream protocol). Its
    end waits for every request it passed on to be answered."""

    def __init__(
        self,
        inner: Any,
        write_stream: Any,
        unanswered: Unanswered | None = None,
        answers: deque[JSONRPCError] | None = None,
    ) -> None:
        self._inner = inner
        self._write = write_stream
        self._unanswered = unanswered if unanswered is not None else Unanswered()
        self._answers = answers if answers is not None else deque()

    @property
    def last_context(self) -> Any:  # the sender's context, read by the SDK's loop
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._unanswered.wait()
                raise
            reply: JSONRPCError | None
            if not isinstance(item, Exception):
                message = item.message
                reused = isinstance(message, JSONRPCRequest) and self._unanswered.pending(message.id)
                self._note(message)  # a reused ID too: its refusal below settles it
                if not reused:
                    return item
                reply = _reused_reply(message.id)
            else:
                reply = self._answers.popleft() if self._answers and _blank(item) else error_reply(item)
                if reply is not None and reply.id is not None:
                    # Counted as asked, or its answer would count for a request in flight
                    # under the same ID, which the end of stdin would then not wait for.
                    self._unanswered.asked(reply.id)
            if reply is not None:
                with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._write.send(SessionMessage(reply))

    def _note(self, message: object) -> None:
        if isinstance(message, JSONRPCRequest):
            self._unanswered.asked(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            params = message.params or {}
            if params.get("requestId") is not None:
                self._unanswered.dropped(params["requestId"])

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


def not_utf8_reply(exc: UnicodeDecodeError) -> JSONRPCError:
    """The error answering a line that is not UTF-8 (MCP's messages are), under the
    request's ID when the rest of it can be read."""
    why = f"byte {exc.object[exc.start]:#04x} at offset {exc.start} is not UTF-8"
    try:
        request_id = _request_id(_loads(exc.object.decode("utf-8", "replace")))
    except (ValueError, RecursionError):
        request_id = None
    if request_id is None:
        return _error(None, PARSE_ERROR, f"Parse error: {why}")
    return _error(request_id, INVALID_REQUEST, f"Invalid request: {why}")


def misread_reply(line: str) -> JSONRPCError | None:
    """The error answering ``line`` if the SDK would misread it, else None: a request
    whose ``id`` is not a string or an integer (null, 1.5, true, an object, an array)
    passes the SDK's parser as a notification, its ``id`` ignored, so it was never
    answered; MCP's request ID is a string or an integer, never null."""
    try:
        message = _loads(line)
    except (ValueError, RecursionError):  # the SDK's parser fails too: error_reply answers
        return None
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return None
    if request_id is None or isinstance(request_id, bool):
        kind = json.dumps(request_id)
    elif isinstance(request_id, (int, float)):
        kind = f"the number {request_id!r}"
    else:
        kind = "an array" if isinstance(request_id, list) else "an object"
    why = f'its "id" must be a string or an integer, not {kind}'
    return _error(None, INVALID_REQUEST, f"Invalid request: {why}")


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
            message = _loads(raw)
            surrogate = next(encoding_problems_in(message), None) is not None
        except ValueError:
            return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({errors[0]['msg']})")
        except RecursionError:  # the SDK's parser stops at ~250 levels, Python's at ~1000
            return _error(None, INVALID_REQUEST, "Invalid request: its JSON is nested too deeply")
        why = errors[0]["msg"]
        if surrogate:
            why = "a \\u escape in it is a lone surrogate, not text (send the character itself)"
        elif "number out of range" in why:
            why = _too_long(message, why)
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
    elif isinstance(top, dict):
        what = _not_a_message(top)
    return _error(_request_id(top), INVALID_REQUEST, f"Invalid request: {what}")


def _loads(text: str) -> Any:
    """``text`` as JSON, integers of any length read (:func:`_long_int`)."""
    return json.loads(text, parse_int=_long_int)


def _long_int(digits: str) -> int:
    """The integer ``digits`` spell, however many: ``int`` refuses more than 4,300
    (``sys.get_int_max_str_digits``); halves are read and joined instead, in about linear
    time (the limit guards against ``int``'s quadratic conversion)."""
    if digits.startswith("-"):
        return -_long_int(digits[1:])
    if len(digits) <= 4000:
        return int(digits)
    half = len(digits) // 2
    return _long_int(digits[:-half]) * 10**half + _long_int(digits[-half:])


def _too_long(message: object, why: str) -> str:
    """Why a message the SDK's parser found a number "out of range" in (an integer of
    more digits than ``sys.get_int_max_str_digits``) is refused: its ``id``, or another."""
    limit = sys.get_int_max_str_digits()
    request_id = _request_id(message)
    if isinstance(request_id, int) and limit and abs(request_id) >= 10**limit:
        return (
            f'its "id" is an integer of more than {limit} digits, more than this server '
            "can read; give it a shorter one (an integer or a string)"
        )
    return f"a number in it has more than {limit} digits, more than this server can read ({why})"


def _not_a_message(message: dict[str, Any]) -> str:
    """What keeps ``message`` (a JSON object the SDK could not read) from being a
    JSON-RPC 2.0 message, so the client knows what to change."""
    if message.get("jsonrpc") != "2.0":
        return 'its "jsonrpc" must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return 'its "method" must be a string'
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return 'its "params" must be an object'
    elif "result" not in message and "error" not in message:
        return 'it has no "method" (a request) and no "result" or "error" (a response)'
    return "not a JSON-RPC 2.0 message"


def _reused_reply(request_id: str | int) -> JSONRPCError:
    """The refusal of a request reusing the ID of one not yet answered (MCP: an ID is
    never reused in a session). The SDK ran it, keeping only the last of the two in its
    table, and answered both under the one ID: the client could not tell the answers
    apart, and cancelling the first cancelled the second."""
    shown = clipped(repr(request_id), 120)  # the client's value: a long one is not echoed in full
    why = f"id {shown} is that of a request not yet answered; give each request its own id"
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {why}")
    )


def _blank(exc: Exception) -> bool:
    """Whether ``exc`` is the SDK's failure to read a blank line (:class:`.streams.StdinLines`)."""
    if not isinstance(exc, ValidationError):
        return False
    raw = next((e["input"] for e in exc.errors() if e["type"] == "json_invalid"), None)
    return isinstance(raw, str) and not raw.strip()


def _request_id(message: object) -> str | int | None:
    """The ID to answer ``message`` under: None when it has none fit to echo (one
    holding a lone surrogate cannot be written as UTF-8: it ended the server)."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, str) and next(encoding_problems_in(request_id), None) is not None:
        return None
    return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=f"{message}; {_ONE_PER_LINE}")
    )
