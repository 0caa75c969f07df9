"""What ``scarwarden mcp`` answers to lines that are not a JSON-RPC message, sent raw to
the real command over its stdin: an error (JSON-RPC 2.0, section 5.1), never silence.

The SDK drops such a line unanswered (its stdio transport logs it at debug level), so a
client that sent a request it could not parse waited for an answer forever.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest
from conftest import head

from scarwarden.files.atomic import write_lock
from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


Replies = list[dict[str, Any]]


#: A tools/call that writes: it waits for the ledger's lock while a test holds it.
RECORD = {"name": "record_episode", "arguments": {"task": "refund a customer", "outcome": "refunded"}}
#: The handshake, then that call (id 1).
RECORDING = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": RECORD},
]
#: ... and a ping (id 2), answered once the call has begun.
RECORD_BEGUN = [*RECORDING, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]


def start_server(repo: MemoryRepo) -> subprocess.Popen[bytes]:
    """``scarwarden mcp`` on ``repo``, its three streams piped, for a test that talks to
    it line by line (:func:`serve_lines` sends everything at once)."""
    command = [sys.executable, "-m", "scarwarden", "-C", str(repo.root), "mcp"]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def json_lines(messages: list[Any]) -> bytes:
    """``messages`` as the lines a client writes on the server's stdin."""
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


def answered(replies: Replies) -> list[tuple[Any, int | None]]:
    """Each reply after the handshake's: its ``id`` (always there, null or not) and its
    error code (None for a result)."""
    return [(r["id"], r.get("error", {}).get("code")) for r in replies[1:]]


def serve_lines(repo: MemoryRepo, lines: list[bytes]) -> tuple[Replies, subprocess.CompletedProcess[bytes]]:
    """Send ``lines`` (after the handshake) and close stdin; every stdout line, parsed."""
    head = [json.dumps(INITIALIZE).encode(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}']
    proc = subprocess.run(
        [sys.executable, "-m", "scarwarden", "-C", str(repo.root), "mcp"],
        input=b"\n".join(head + lines),
        capture_output=True,
        timeout=120,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()], proc


def test_lines_that_are_not_a_message_are_answered_and_serving_goes_on(demo_repo: MemoryRepo) -> None:
    replies, proc = serve_lines(
        demo_repo,
        [
            b"{not json",
            b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":"x"}',
            b'[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]',
            b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"recall",'
            b'"arguments":{"task":"a\\ud800b"}}}',
            b"\xff\xfe",
            b"",
            b'{"jsonrpc":"2.0","id":20,"method":"tools/list"}',
            b'{"jsonrpc":"2.0","id":21,"meth',  # stdin closes mid-message
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert answered(replies) == [
        (None, -32700),  # not JSON
        (14, -32600),  # JSON, not a request: answered under its own ID
        (None, -32600),  # a batch (MCP has none since 2025-06-18)
        (9, -32600),  # the SDK cannot read a lone surrogate's escape (python-sdk issue 2751)
        (None, -32700),  # not UTF-8
        (20, None),  # a good request after all that is served
        (None, -32700),  # the last, cut-off line
    ], replies
    assert "tools" in replies[6]["result"]
    messages = [r["error"]["message"] for r in replies if "error" in r]
    assert all(m.startswith(("Parse error", "Invalid request")) for m in messages), messages
    assert b"Traceback" not in proc.stdout


def test_json_nested_too_deeply_is_answered_and_serving_goes_on(demo_repo: MemoryRepo) -> None:
    """Past the SDK's parser's depth: the check of what it could not read must not
    itself give up (a RecursionError ended the server, "internal error: ExceptionGroup")."""
    deep = [
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"recall","arguments":{"task":' % n
        + b"[" * depth
        + b"]" * depth
        + b"}}}"
        for n, depth in ((30, 300), (31, 100_000))
    ]
    replies, proc = serve_lines(demo_repo, [*deep, b'{"jsonrpc":"2.0","id":32,"method":"tools/list"}'])
    assert proc.returncode == 0, proc.stderr.decode()
    assert [r["error"]["code"] for r in replies[1:3]] == [-32600, -32600], replies
    assert "nested too deeply" in replies[2]["error"]["message"]
    assert replies[3]["id"] == 32 and "tools" in replies[3]["result"]


def test_a_client_that_stops_reading_ends_the_server_quietly(demo_repo: MemoryRepo) -> None:
    """A client closing its end of stdout (it quit, it crashed) broke the next answer's
    write: the server ended with exit 1 "internal error: ExceptionGroup ... this is a bug
    in Scarwarden"."""
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    proc.stdout.close()
    try:
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
        proc.stdin.close()
    except BrokenPipeError:  # the server has gone already: as good
        pass
    assert proc.wait(timeout=60) == 0
    stderr = proc.stderr.read().decode()
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr


def test_every_request_sent_before_stdin_closes_is_answered(demo_repo: MemoryRepo) -> None:
    """``printf '...' | scarwarden mcp``: the SDK cancels the requests in flight when
    stdin ends, so the last requests of a piped session got no answer at all (the recall
    here, every time; a ``tools/list`` now and then, which failed CI)."""
    recall = {"name": "recall", "arguments": {"task": "refund a customer's duplicate charge"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": recall}).encode(),
        b'{"jsonrpc":"2.0","id":"41","method":"tools/list"}',
    ]
    replies, proc = serve_lines(demo_repo, lines)
    assert proc.returncode == 0, proc.stderr.decode()
    answered = {r["id"]: r for r in replies[1:]}
    assert sorted(answered, key=str) == [40, "41"], replies
    recalled = json.loads(answered[40]["result"]["content"][0]["text"])
    assert recalled["task"] == recall["arguments"]["task"]
    assert "tools" in answered["41"]["result"]


def test_a_request_the_client_cancelled_does_not_hold_the_end(demo_repo: MemoryRepo) -> None:
    """A cancelled request is never answered (MCP: the server must not), so waiting for
    the answers before ending must not wait for it."""
    call = {"name": "recall", "arguments": {"task": "refund a customer"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": call}).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":50}}',
        b'{"jsonrpc":"2.0","id":51,"method":"tools/list"}',
    ]
    replies, proc = serve_lines(demo_repo, lines)
    assert proc.returncode == 0, proc.stderr.decode()
    ids = [r["id"] for r in replies[1:]]
    assert 51 in ids and set(ids) <= {50, 51}, replies


def test_a_bad_prompt_request_is_invalid_params_naming_what_it_takes(demo_repo: MemoryRepo) -> None:
    """An unknown prompt or argument was error code 0 ("Error rendering prompt") with a
    traceback on stderr; MCP's code for both is -32602."""

    def get(n: int, params: dict[str, Any]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": n, "method": "prompts/get", "params": params}).encode()

    replies, proc = serve_lines(
        demo_repo,
        [
            get(60, {"name": "nope"}),
            get(61, {"name": "use_memory", "arguments": {"tsk": "refund"}}),
            get(62, {"name": "use_memory", "arguments": {"task": "re\0fund"}}),
            get(63, {"name": "use_memory", "arguments": {"task": "refund a customer"}}),
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    by_id = {r["id"]: r for r in replies[1:]}
    errors = {n: (by_id[n]["error"]["code"], by_id[n]["error"]["message"]) for n in (60, 61, 62)}
    assert errors == {
        60: (-32602, "no prompt 'nope'; the prompts are: use_memory"),
        61: (-32602, "'tsk' is not an argument of use_memory; use_memory takes: task"),
        62: (-32602, "argument 'task' holds a NUL character (\\0); use_memory takes: task"),
    }
    assert "refund a customer" in by_id[63]["result"]["messages"][0]["content"]["text"]
    assert b"Traceback" not in proc.stderr and b"ERROR" not in proc.stderr, proc.stderr.decode()


def test_a_line_with_a_carriage_return_inside_is_one_line(demo_repo: MemoryRepo) -> None:
    """A CR is JSON whitespace and MCP ends a message at a newline only; the SDK read
    stdin in universal-newline mode, cut the line at the CR and answered two parse errors
    under ``null``, so the request was never answered."""
    replies, proc = serve_lines(
        demo_repo,
        [
            b'{"jsonrpc":"2.0",\r"id":70,\r"method":"tools/list"}',
            b'{"jsonrpc":"2.0","id":71,"method":"tools/list"}\r',  # a CRLF line end
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    served = [(r.get("id"), "tools" in r.get("result", {})) for r in replies[1:]]
    assert served == [(70, True), (71, True)], replies


@pytest.mark.parametrize(
    ("request_id", "said"),
    [
        (b"null", "not null"),
        (b"1.5", "not the number 1.5"),
        (b"2.0", "not the number 2.0"),
        (b"true", "not true"),
        (b'{"n":1}', "not an object"),
        (b"[1]", "not an array"),
    ],
)
def test_a_request_whose_id_is_not_a_string_or_an_integer_is_answered(
    demo_repo: MemoryRepo, request_id: bytes, said: str
) -> None:
    """The SDK read such a request as a notification (it ignores the ``id``) and dropped
    it: the client waited forever. MCP: an ID is a string or an integer, never null;
    JSON-RPC 2.0 answers an invalid request with -32600 under ``null``."""
    replies, proc = serve_lines(
        demo_repo,
        [
            b'{"jsonrpc":"2.0","id":%s,"method":"tools/list"}' % request_id,
            b'{"jsonrpc":"2.0","id":%s,"method":"notifications/initialized"}' % request_id,
            b'{"jsonrpc":"2.0","id":72,"method":"tools/list"}',
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert answered(replies) == [
        (None, -32600),
        (None, -32600),
        (72, None),
    ], replies
    message = replies[1]["error"]["message"]
    assert message.startswith(f'Invalid request: its "id" must be a string or an integer, {said}'), message


def test_messages_that_need_no_answer_get_none(demo_repo: MemoryRepo) -> None:
    """A notification (no ``id``, known method or not), a response to no request and an
    error under ``null`` (the client could not read something) are not answered
    (JSON-RPC 2.0: a notification is never answered; a response is not a request)."""
    replies, proc = serve_lines(
        demo_repo,
        [
            b'{"jsonrpc":"2.0","method":"no/such"}',
            b'{"jsonrpc":"2.0","id":73,"result":{}}',
            b'{"jsonrpc":"2.0","id":74,"error":{"code":-1,"message":"x"}}',
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
            b'{"jsonrpc":"2.0","id":75,"method":"tools/list"}',
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert [r["id"] for r in replies[1:]] == [75], replies
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()


def test_a_line_that_is_not_utf8_is_refused_and_nothing_is_written(demo_repo: MemoryRepo) -> None:
    """The SDK decoded stdin with errors="replace": a Latin-1 "é" in a record_episode
    call was committed to the ledger as U+FFFD, for good. MCP's messages are UTF-8; such
    a line is answered (under its ID when it can be read) and nothing is done."""
    before = head(demo_repo)
    call = {
        "name": "record_episode",
        "arguments": {"task": "refund the café customer", "outcome": "refunded twice"},
    }
    request = {"jsonrpc": "2.0", "id": 80, "method": "tools/call", "params": call}
    line = json.dumps(request, ensure_ascii=False)
    replies, proc = serve_lines(
        demo_repo,
        [line.encode("latin-1"), b'{"jsonrpc":"2.0","id":81,"method":"tools/list"}'],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert answered(replies) == [(80, -32600), (81, None)], replies
    message = replies[1]["error"]["message"]
    assert message.startswith("Invalid request: byte 0xe9 at offset "), message
    assert "is not UTF-8" in message
    assert head(demo_repo) == before


def test_a_line_that_starts_with_a_byte_order_mark_is_served(demo_repo: MemoryRepo) -> None:
    """A UTF-8 byte order mark (Windows tools write one) was answered "Parse error: the
    line is not JSON (... expected value at line 1 column 1)" under null, and the request
    was lost; JSON parsers may ignore it (RFC 8259, section 8.1)."""
    replies, proc = serve_lines(demo_repo, [b'\xef\xbb\xbf{"jsonrpc":"2.0","id":90,"method":"tools/list"}'])
    assert proc.returncode == 0, proc.stderr.decode()
    assert [(r.get("id"), "tools" in r.get("result", {})) for r in replies[1:]] == [(90, True)], replies


def test_a_request_reusing_the_id_of_one_in_flight_is_refused(demo_repo: MemoryRepo) -> None:
    """MCP: a request ID is never reused in a session. The SDK ran a second request under
    the ID of one still in flight (its table keeps the last), and answered both under
    that ID: the client could not tell them apart, and cancelling the first cancelled the
    second. Here the first, a record_episode, waits for the ledger's lock the test holds."""
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": RECORD},
        {"jsonrpc": "2.0", "id": "05", "method": "tools/list"},  # the SDK's "05" is 5
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
    ]
    with write_lock(demo_repo):
        proc.stdin.write(json_lines(lines))
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(3)]
    proc.stdin.close()
    replies += [json.loads(line) for line in proc.stdout.read().splitlines()]
    assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
    answers = answered(replies)
    assert sorted(answers, key=str) == [("05", -32600), (5, None), (6, None)], replies
    assert answers[-1] == (5, None), replies  # the record_episode, once the lock was free
    refused = next(r for r in replies if r["id"] == "05")["error"]["message"]
    assert refused.startswith("Invalid request: id '05' is that of a request not yet answered"), refused
    assert "ep-" in replies[-1]["result"]["content"][0]["text"]


def test_params_of_the_wrong_shape_are_answered_naming_the_field(demo_repo: MemoryRepo) -> None:
    """A request whose ``params`` hold a field of the wrong type, or miss one, was
    answered -32602 "Invalid request parameters" with nothing saying which field."""

    def request(n: int, method: str, params: dict[str, Any]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).encode()

    replies, proc = serve_lines(
        demo_repo,
        [
            request(100, "tools/call", {"name": "recall", "arguments": "refund"}),
            request(101, "tools/call", {"arguments": {}}),
            request(102, "resources/read", {"uri": 5}),
            request(103, "tools/list", {}),
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    by_id = {r["id"]: r for r in replies[1:]}
    errors = {n: (by_id[n]["error"]["code"], by_id[n]["error"]["message"]) for n in (100, 101, 102)}
    assert errors == {
        100: (-32602, "Invalid params: params.arguments must be an object (tools/call)"),
        101: (-32602, "Invalid params: params.name is required (tools/call)"),
        102: (-32602, "Invalid params: params.uri must be a string (resources/read)"),
    }, errors
    assert "tools" in by_id[103]["result"]


def test_a_request_before_the_handshake_is_told_to_initialize_first(demo_repo: MemoryRepo) -> None:
    """A request sent before ``initialize`` was answered "Invalid request parameters"
    (the SDK's gate), which sent the client looking at params that were fine."""
    lines = [
        b'{"jsonrpc":"2.0","id":110,"method":"tools/list"}',
        json.dumps(INITIALIZE).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":111,"method":"tools/list"}',
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), "mcp"],
        input=b"\n".join(lines),
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    by_id = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert by_id[110]["error"]["code"] == -32602
    assert by_id[110]["error"]["message"].startswith("the session is not initialized: send initialize first")
    assert "tools" in by_id[111]["result"]


def test_a_message_of_the_wrong_shape_is_told_what_is_wrong(demo_repo: MemoryRepo) -> None:
    """Each was answered "Invalid request: not a JSON-RPC 2.0 message", which did not
    say what to change."""
    replies, proc = serve_lines(
        demo_repo,
        [
            b'{"jsonrpc":"2.0","id":120,"method":5}',
            b'{"jsonrpc":"2.0","id":121}',
            b'{"jsonrpc":"2.0","id":122,"method":"tools/list","params":7}',
            b'{"jsonrpc":"2.0","id":123,"method":"tools/list","params":[1]}',
            b'{"jsonrpc":"1.0","id":124,"method":"tools/list"}',
            b'{"id":125,"method":"tools/list"}',
            b'{"jsonrpc":"2.0","id":126,"method":"tools/list","params":null}',
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    said = [(r["id"], r.get("error", {}).get("message", "").partition(";")[0]) for r in replies[1:]]
    assert said == [
        (120, 'Invalid request: its "method" must be a string'),
        (121, 'Invalid request: it has no "method" (a request) and no "result" or "error" (a response)'),
        (122, 'Invalid request: its "params" must be an object'),
        (123, 'Invalid request: its "params" must be an object'),
        (124, 'Invalid request: its "jsonrpc" must be "2.0"'),
        (125, 'Invalid request: its "jsonrpc" must be "2.0"'),
        (126, ""),  # served: null params are no params
    ], replies


def test_a_request_whose_id_holds_a_lone_surrogate_is_answered_under_null(demo_repo: MemoryRepo) -> None:
    """Its ``id`` cannot be echoed (a lone surrogate is not text, so not UTF-8): the
    answer under it could not be written and the server ended, "internal error:
    ExceptionGroup" (PydanticSerializationError), dropping the session."""
    replies, proc = serve_lines(
        demo_repo,
        [
            b'{"jsonrpc":"2.0","id":"a\\ud800","method":"tools/list"}',
            b'{"jsonrpc":"2.0","id":"b\\udc00","method":"tools/list","params":"x"}',
            b'{"jsonrpc":"2.0","id":130,"method":"tools/list"}',
        ],
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert answered(replies) == [
        (None, -32600),
        (None, -32600),
        (130, None),
    ], replies
    assert "lone surrogate" in replies[1]["error"]["message"]


def test_an_unreadable_line_under_the_id_of_a_request_in_flight_does_not_lose_its_answer(
    demo_repo: MemoryRepo,
) -> None:
    """The answer to an unreadable line counted as the answer to the request in flight
    under the same ID, so at the end of stdin the server stopped waiting for it and the
    SDK cancelled it: the record_episode (waiting for the ledger's lock, held here) was
    never answered."""
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 140, "method": "tools/call", "params": RECORD},
        {"jsonrpc": "2.0", "id": 140, "method": "tools/call", "params": "x"},
    ]
    with write_lock(demo_repo):
        proc.stdin.write(json_lines(lines))
        proc.stdin.close()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        time.sleep(1)  # the end of stdin reaches the server while the request waits
    replies += [json.loads(line) for line in proc.stdout.read().splitlines()]
    assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
    assert answered(replies) == [(140, -32600), (140, None)], replies
    assert "ep-" in replies[-1]["result"]["content"][0]["text"]


def test_a_request_whose_id_has_too_many_digits_is_refused_under_that_id(demo_repo: MemoryRepo) -> None:
    """An integer ID of over 4,300 digits (Python's int-string limit, which the SDK's
    parser keeps) was answered -32700 "number out of range" under ``null``: a client
    cannot match that to its request. Now it is refused -32600 under its own ID, echoed
    digit for digit; so is a request holding such a number elsewhere, under its ID."""
    huge = "9" * 4301
    lines = [
        json.dumps(INITIALIZE).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":%s,"method":"tools/list"}' % huge.encode(),
        b'{"jsonrpc":"2.0","id":-1%s,"method":"tools/list"}' % huge.encode(),
        b'{"jsonrpc":"2.0","id":150,"method":"tools/list","params":{"n":%s}}' % huge.encode(),
        b'{"jsonrpc":"2.0","id":151,"method":"tools/list"}',
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), "mcp"],
        input=b"\n".join(lines),
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    # parse_int=str (each integer as its digits): json.loads cannot read integers that long
    read = [json.loads(line, parse_int=str) for line in proc.stdout.splitlines()[1:]]
    assert [(r["id"], r.get("error", {}).get("code")) for r in read] == [
        (huge, "-32600"),
        ("-1" + huge, "-32600"),
        ("150", "-32600"),
        ("151", None),
    ], [(str(r["id"])[:20], r.get("error")) for r in read]
    message = read[0]["error"]["message"]
    assert message.startswith('Invalid request: its "id" is an integer of more than 4300 digits'), message
    assert read[2]["error"]["message"].startswith("Invalid request: a number in it has more than 4300 digits")
