"""Reading a model server's reply: its body within ``model.timeout``, its token counts,
its ``Retry-After``.

Imported by :mod:`scarwarden.llm.client`, which owns the requests; ``requests`` and
``urllib3`` are imported inside the calls only (~110 ms).
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
import threading
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    import requests

    from scarwarden.errors import ModelError

#: Bytes read from a reply at a time.
CHUNK = 64 * 1024
#: The largest reply read (16 MiB): a chat completion is kilobytes (100,000 tokens are
#: ~400 kB); a server streaming more than this would fill the memory, so it is refused.
MAX_REPLY_BYTES = 16 * 1024 * 1024


def post(session: Any, url: str, body: Any, headers: dict[str, str], timeout: float) -> requests.Response:
    """POST ``body`` as JSON, the reply streamed (:func:`read_body` reads it) and a
    redirect not followed: requests would send the body on to any host named (a 302 as
    a GET, which the next server answers as it likes), so :func:`redirected` refuses it.
    The status line and headers come within ``timeout`` (:func:`within`)."""
    return within(timeout, session.post, url, json=body, headers=headers, timeout=timeout)


def within(
    seconds: float, send: Callable[..., requests.Response], url: str, /, **kwargs: Any
) -> requests.Response:
    """``send(url, **kwargs)`` (a session's ``get`` or ``post``), streamed, following no
    redirect, its status line and headers within ``seconds`` too: requests bounds each
    read, so a server dripping a header line now and then held the call as long as it
    liked. Past it the call is given up as a ``requests.Timeout`` (its thread is left to
    end with the connection)."""
    import requests

    outcome: list[Any] = []

    def call() -> None:
        try:
            outcome.append(send(url, stream=True, allow_redirects=False, **kwargs))
        except Exception as exc:  # noqa: BLE001 - raised again below, in the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=call, name="scarwarden-model-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise requests.Timeout(f"no status line and headers within {seconds:g} s")
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


def shown(text: str) -> str:
    """A server's words for a message: control characters escaped as repr() shows them
    (``\\x1b``), so none reaches a terminal (an escape sequence retitles, clears or
    recolours it)."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def server_says(response: requests.Response, scrub: Callable[[str], str], limit: int) -> str:
    """A server's error text for a message: its ``error`` message, else its body, on
    one line, scrubbed of the key, shown safely, at most ``limit`` characters."""
    try:
        body = response.json()
    except (ValueError, RecursionError):
        text = response.text
    else:
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            text = str(error.get("message") or error)
        elif error:
            text = str(error)
        else:
            text = json.dumps(body)[:limit]
    text = shown(" ".join(scrub(text).split()))
    return text[:limit] + ("..." if len(text) > limit else "")


def redirected(response: requests.Response, base_url: str, scrub: Callable[[str], str]) -> ModelError:
    """The error for a reply that redirects elsewhere, naming where (scrubbed)."""
    from scarwarden.errors import ModelError

    where = shown(scrub(response.headers.get("Location") or ""))[:300] or "nowhere (no Location)"
    return ModelError(
        f"the model server at {base_url} answered HTTP {response.status_code}, a redirect to "
        f"{where}; redirects are not followed, so nothing was sent on",
        hint="set model.base_url (SCARWARDEN_BASE_URL) to the address it redirects to, "
        "if that is the server you meant",
    )


def read_body(response: requests.Response, deadline: float, timeout: float) -> str | None:
    """Read a streamed reply's body by ``deadline`` (``time.monotonic``); the problem
    if it could not be, else ``None`` (then ``response.content`` holds it).

    The request's ``timeout`` bounds each read from the socket, not the reply: a server
    sending a byte now and then (a proxy keeping the connection alive, a broken one)
    held the call for as long as it liked, so the whole reply has ``timeout`` seconds.
    Reads return what has arrived (urllib3 2's ``read1``), so the deadline is checked
    as the bytes come; with urllib3 1, once per :data:`CHUNK`. A reply over
    :data:`MAX_REPLY_BYTES` is a :class:`~scarwarden.errors.ModelError` (no retry).
    """
    import requests
    import urllib3

    from scarwarden.errors import ModelError

    read1 = getattr(response.raw, "read1", None)
    chunks: list[bytes] = []
    size = 0
    try:
        pieces = (
            iter(lambda: read1(CHUNK, decode_content=True), b"")
            if read1 is not None
            else response.iter_content(CHUNK)
        )
        for chunk in pieces:
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                response.close()
                raise ModelError(
                    f"the model server's reply is over {MAX_REPLY_BYTES // 2**20} MiB, which no "
                    "chat completion is; stopped reading it, nothing was used",
                    hint="check that model.base_url (SCARWARDEN_BASE_URL) is a chat completions server",
                )
            if time.monotonic() > deadline:
                response.close()
                return f"no complete answer within {timeout:g} s (model.timeout)"
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        return f"the connection broke while the reply was read ({type(exc).__name__})"
    # what .json() and .text read from now on; without a leading UTF-8 byte order mark,
    # which requests decodes as text for application/json, and json then refuses
    response._content = b"".join(chunks).removeprefix(codecs.BOM_UTF8)
    return None


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def json_content(content: str) -> Any:
    """Parse a reply's JSON content, tolerating one surrounding markdown code fence
    (models add them) and a leading byte order mark (some add one). Raises
    ``json.JSONDecodeError``, or ``RecursionError`` for JSON nested deeper than Python reads."""
    content = content.lstrip(" \t\r\n\ufeff")  # json.loads: "Unexpected UTF-8 BOM"
    match = _FENCE.match(content)
    return json.loads(match.group(1) if match else content, parse_int=read_int)


def read_int(digits: str) -> int | float:
    """A JSON integer; one too long for ``int()`` (past CPython's 4,300 digits, which
    raised a bare ValueError out of json) as an infinity, which no count or field takes."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()  # 0: none (before 3.10.7)
    if len(digits.lstrip("-")) > limit > 0:
        return -math.inf if digits.startswith("-") else math.inf
    return int(digits)


def token_counts(usage: Any) -> tuple[int, int, int] | None:
    """(prompt, completion, total) tokens as a reply's ``usage`` reports them, or ``None``
    when it does not: no usage, or a count that is none (a string, a list, a negative
    or infinite number: the caller then estimates, as for a server that sends none)."""
    if not isinstance(usage, dict):
        return None
    prompt = _count(usage.get("prompt_tokens"))
    completion = _count(usage.get("completion_tokens") or 0)
    if prompt is None or completion is None:
        return None
    total = _count(usage.get("total_tokens") or prompt + completion)
    return None if total is None else (prompt, completion, total)


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) and value >= 0 else None


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds (it may be a number or an HTTP date); ``None`` if absent."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
