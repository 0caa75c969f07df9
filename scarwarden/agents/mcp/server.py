"""``scarwarden mcp``: the memory as a Model Context Protocol server over stdio.

Built on the official SDK (``mcp`` 2.x, ``pip install 'scarwarden[mcp]'``): its
high-level ``MCPServer`` (FastMCP in 1.x) derives each tool's JSON schema from the
typed, described parameters of :mod:`scarwarden.agents.mcp.args`. What the tools do
lives in :mod:`scarwarden.agents.mcp.tools`; :mod:`scarwarden.agents.mcp.register`
registers them and turns a :class:`ScarwardenError` into the SDK's ``ToolError``
(``is_error=True`` with the CLI's message), because any other exception reaches the
client as a bare "Error executing tool"; this module builds the server and serves it.
Importing the SDK costs ~0.5 s, so only the ``mcp`` command imports these modules.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from scarwarden import __version__
from scarwarden.agents.mcp import register
from scarwarden.agents.mcp.interrupt import STOPS, Interrupt, say_stopped
from scarwarden.agents.mcp.tools import WORKFLOW, MemoryTools
from scarwarden.errors import UsageError, clipped
from scarwarden.files.input_policy import encoding_problems_in
from scarwarden.git.run import detach_from_terminal
from scarwarden.repo import MemoryRepo


class _Server(MCPServer):
    """The SDK's server, with errors an agent can act on (issue 18).

    The SDK prefixes every tool error with "Error executing tool NAME: " and reports
    bad arguments as pydantic's multi-line dump (with a URL and the caller's values).
    Here a tool error is its own message, and bad arguments are one sentence naming each
    argument and what is wrong, plus a hint listing the tool's arguments.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.interrupt = Interrupt()
        _quiet_when_stderr_breaks()

    async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        nul = _nul_argument(arguments)
        if nul is not None:  # else a path with one crashes deep inside: "Error executing tool"
            raise ToolError(
                f"{name}: argument '{nul}' holds a NUL character (\\0), which no text, path "
                "or ID may hold.\nhint: send the value without it"
            )
        # Else the first file, hash or index write crashes on it. (Over stdio such a call
        # never gets here: the SDK cannot parse the "\\ud800" escape and drops the
        # line unanswered, modelcontextprotocol/python-sdk issue 2751.)
        surrogate = next(encoding_problems_in(arguments), None)
        if surrogate is not None:
            where, reason = surrogate
            raise ToolError(
                bounded(name, f"{name}: argument {where} {reason}; nothing was done")
                + "\nhint: send valid Unicode text (a surrogate pair, or the character itself)"
            )
        try:
            return await super().call_tool(name, arguments, *args, **kwargs)
        except ToolError as exc:
            if type(exc) is not ToolError:  # UnexpectedToolError: the SDK hides crashes
                raise
            cause = exc.__cause__
            if isinstance(cause, ToolError):
                raise ToolError(bounded(name, str(cause))) from cause
            if isinstance(cause, ValidationError):
                raise ToolError(bounded(name, _arguments_message(self, name, cause))) from cause
            raise ToolError(bounded(name, str(exc))) from exc

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> Any:
        """The SDK's, with a prompt's bad name or arguments answered as invalid params
        (``-32602``, MCP's code for them) naming what it takes: the SDK answered error
        code 0, "Error rendering prompt", and logged a traceback on stderr."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS

        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            known = ", ".join(p.name for p in self._prompt_manager.list_prompts())
            raise MCPError(code=INVALID_PARAMS, message=f"no prompt {name!r}; the prompts are: {known}")
        takes = [a.name for a in prompt.arguments or ()]
        given = arguments or {}
        unknown = sorted(set(given).difference(takes))
        nul = _nul_argument(given)
        problem = None
        if unknown:
            problem = f"{', '.join(repr(a) for a in unknown)} is not an argument of {name}"
        elif nul is not None:
            problem = f"argument '{nul}' holds a NUL character (\\0)"
        elif next(encoding_problems_in(given), None) is not None:
            problem = f"an argument of {name} is not valid Unicode text (a lone surrogate)"
        if problem is not None:
            raise MCPError(
                code=INVALID_PARAMS, message=f"{problem}; {name} takes: {', '.join(takes) or 'nothing'}"
            )
        return await super().get_prompt(name, arguments, context)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop, with every unreadable line answered (:mod:`.wire`)."""
        from mcp.server.stdio import stdio_server

        from scarwarden.agents.mcp.streams import StdinError, claimed_stdin, claimed_stdout
        from scarwarden.agents.mcp.wire import AnsweringReadStream, AnsweringWriteStream, Unanswered

        try:
            with anyio.CancelScope() as scope, self.interrupt.cancelling(scope):
                with claimed_stdin() as lines, claimed_stdout() as out:
                    async with stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
                        unanswered = Unanswered()
                        writer = AnsweringWriteStream(write_stream, unanswered)
                        await self._lowlevel_server.run(
                            AnsweringReadStream(read_stream, writer, unanswered, lines.answers),
                            writer,
                            self._lowlevel_server.create_initialization_options(),
                        )
        except Exception as exc:
            if _client_gone(exc):  # a client that closed its end is the end, not a crash
                return
            if self.interrupt.seen and _only(exc, (anyio.BrokenResourceError, anyio.ClosedResourceError)):
                # The SDK's tasks passing a message on met their streams closed under them
                # by the interrupt before their own cancellation: that is the interrupt.
                return
            failed = _stream_error(exc)
            if failed is None:
                raise
            reading = isinstance(failed, StdinError)
            what = "read the requests from stdin" if reading else "write the answers to stdout"
            raise UsageError(
                f"could not {what}: {failed}",
                hint="stdin and stdout are the connection to the client: start the server again from it",
            ) from None


async def _name_bad_params(ctx: Any, call_next: Any) -> Any:
    """Middleware: a request whose ``params`` hold a field of the wrong type, or miss
    one, is answered -32602 naming the field; the SDK answers "Invalid request
    parameters" and nothing else (it keeps pydantic's text off the wire). It answers a
    request sent before ``initialize`` the same way (its gate's "pinned compat" code):
    here the message says to initialize first."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    try:
        return await call_next(ctx)
    except MCPError as exc:
        gate = exc.error.message == "Invalid request parameters" and ctx.session.client_params is None
        if not gate or ctx.method == "initialize":
            raise
        raise MCPError(
            code=INVALID_PARAMS,
            message="the session is not initialized: send initialize first (then "
            "notifications/initialized); before it only ping is answered",
        ) from None
    except ValidationError as exc:
        problems = [_param_problem(e) for e in exc.errors() if e["loc"][:1] == ("params",)]
        if not problems:
            raise
        message = f"Invalid params: {'; '.join(problems[:10])} ({ctx.method})"
        raise MCPError(code=INVALID_PARAMS, message=clipped(message, LINE_LIMIT)) from None


#: What a field of the wrong JSON type must be, by pydantic's error type.
_MUST_BE = {
    "dict_type": "an object",
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "bool_type": "true or false",
    "list_type": "an array",
    "float_type": "a number",
}


def _param_problem(error: Any) -> str:
    """``params.uri must be a string``: one error of the params, without their value."""
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "missing":
        return f"{where} is required"
    if error["type"] in _MUST_BE:
        return f"{where} must be {_MUST_BE[error['type']]}"
    return f"{where}: {error['msg'][:1].lower()}{error['msg'][1:]}"


def _quiet_when_stderr_breaks() -> None:
    """The SDK logs to stderr through rich (a failed tool call, at INFO), whose console
    answers a broken pipe with SystemExit(1): a client that closed its end of stderr
    lost the server at its first tool error. Such a log now goes quiet instead."""
    import logging

    for handler in logging.getLogger().handlers:
        console = getattr(handler, "console", None)
        if console is not None and hasattr(console, "on_broken_pipe"):
            console.on_broken_pipe = lambda console=console: setattr(console, "quiet", True)


def _stream_error(exc: BaseException) -> OSError | None:
    """The error reading stdin or writing stdout (no space, an I/O error) that ended the
    transport, if that is what ``exc`` (or every error of an exception group) is."""
    group = getattr(exc, "exceptions", None)
    if group is None:
        return exc if isinstance(exc, OSError) else None
    errors = [_stream_error(e) for e in group]
    return errors[0] if errors and all(e is not None for e in errors) else None


def _only(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc``, or every error of it as an exception group, is one of ``kinds``."""
    group = getattr(exc, "exceptions", None)
    if group is not None:
        return bool(group) and all(_only(e, kinds) for e in group)
    return isinstance(exc, kinds)


def _client_gone(exc: BaseException) -> bool:
    """Whether ``exc`` (or every error of an exception group) is a write to a client
    that closed its end of stdout."""
    group = getattr(exc, "exceptions", None)
    if group is not None:
        return bool(group) and all(_client_gone(e) for e in group)
    return isinstance(exc, (BrokenPipeError, ConnectionResetError))


#: An error's line longer than this is cut (a 10,000-character argument is not echoed
#: back in full, issue 27); the cut says how long the line was.
LINE_LIMIT = 300
#: At most this many lines of problems (the rest are counted).
MAX_LINES = 40


def bounded(name: str, message: str) -> str:
    """``message`` fit to send back: each line at most :data:`LINE_LIMIT` characters, at
    most :data:`MAX_LINES` lines, and a problem line's ``NAME: `` prefix dropped when the
    first line already starts with it (``record_episode: ... record_episode: ...``)."""
    lines = message.split("\n")
    prefix = f"{name}: "
    if lines and lines[0].startswith(prefix):
        lines = lines[:1] + [_unprefixed(line, prefix) for line in lines[1:]]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"  ... and {len(lines) - MAX_LINES} more lines"]
    return "\n".join(clipped(line, LINE_LIMIT) for line in lines)


def _unprefixed(line: str, prefix: str) -> str:
    body = line.lstrip(" ")
    return line[: len(line) - len(body)] + body.removeprefix(prefix)


def _nul_argument(arguments: Mapping[str, Any]) -> str | None:
    """The name of the first argument holding a NUL character (in a string, or a string
    of a list or mapping), else None."""
    for key, value in arguments.items():
        values = (
            value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else [value]
        )
        if any(isinstance(v, str) and "\0" in v for v in values):
            return str(key)
    return None


def _arguments_message(server: MCPServer, name: str, exc: ValidationError) -> str:
    """``get_rule``: "argument 'rule_id' is required; 'id' is not an argument" + hint."""
    parts = []
    for err in exc.errors():
        arg = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "missing":
            parts.append(f"argument '{arg}' is required")
        elif err["type"] == "extra_forbidden":
            parts.append(f"'{arg}' is not an argument of {name}")
        else:  # pydantic's own sentence, without the rejected value (the caller's data)
            parts.append(f"argument '{arg}': {err['msg'][:1].lower()}{err['msg'][1:]}")
    tool = server._tool_manager.get_tool(name)
    known = ", ".join(tool.parameters.get("properties", {})) if tool is not None else ""
    return f"{name}: {'; '.join(parts)}.\nhint: {name} takes: {known}"


def build_server(
    repo: MemoryRepo,
    *,
    allow_distill_commit: bool = False,
    environ: Mapping[str, str] | None = None,
    sync: bool = False,
) -> MCPServer:
    """An MCP server over ``repo``: seven tools, three resources, one prompt."""
    tools = MemoryTools(repo, allow_distill_commit=allow_distill_commit, environ=environ, sync=sync)
    server: MCPServer = _Server(
        "scarwarden",
        title="Scarwarden memory",
        version=__version__,
        description=f"Auditable, git-native agent memory at {repo.root}",
        instructions=WORKFLOW,
    )
    # Registration order is the order clients list the tools in: the loop first.
    register.add_loop_tools(server, tools)
    register.add_audit_tools(server, tools)
    register.add_distill_tool(server, tools)
    register.add_visual_tool(server, tools)
    register.add_resources(server, tools, repo.playbook_rel)
    register.add_prompt(server)
    _refuse_unknown_arguments(server)
    if isinstance(getattr(server, "middleware", None), list):  # the SDK's hook is provisional (mcp 2.3)
        server.middleware.append(_name_bad_params)
    return server


def _refuse_unknown_arguments(server: MCPServer) -> None:
    """Make every tool refuse arguments it does not declare (``additionalProperties:
    false`` in its schema), instead of the SDK's default of dropping them unseen: an
    agent calling ``record_episode`` with ``id`` or ``at`` must learn they were not
    kept (issue 16, docs/mcp.md). The SDK has no public switch for this, so the
    registered tools' argument models are replaced by strict subclasses; the MCP tests
    call the server through the SDK client and fail if the SDK stops honouring it.
    """
    from pydantic import ConfigDict

    for tool in server._tool_manager.list_tools():
        loose = tool.fn_metadata.arg_model
        strict = type(
            loose.__name__,
            (loose,),
            {"model_config": ConfigDict(arbitrary_types_allowed=True, extra="forbid")},
        )
        tool.fn_metadata.arg_model = strict
        tool.parameters["additionalProperties"] = False


def serve(
    repo: MemoryRepo,
    *,
    allow_distill_commit: bool = False,
    environ: Mapping[str, str] | None = None,
    sync: bool = False,
) -> None:
    """Serve ``repo`` over stdin/stdout until the client closes the connection."""
    for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)):
        if stream is None:  # started with it closed (Python makes it None): not a crash
            raise UsageError(
                f"{name} is closed: scarwarden mcp speaks MCP over stdin and stdout",
                hint="start it from an MCP client (docs/mcp.md), or pipe JSON-RPC lines into it",
            )
    server = build_server(repo, allow_distill_commit=allow_distill_commit, environ=environ, sync=sync)
    assert isinstance(server, _Server)
    # SIGINT waits for the write in flight (:mod:`.interrupt`); a Ctrl-C typed on the
    # terminal, sent to its whole foreground process group, must not kill that write's
    # git processes and hooks meanwhile (it was undone, "the pre-commit hook refused").
    detach_from_terminal()
    try:
        server.run("stdio")
        signum = server.interrupt.signum
    except KeyboardInterrupt:  # SIGINT where the event loop does not receive it (:mod:`.interrupt`)
        signum = signal.SIGINT
    if signum is not None:
        # SIGINT (Ctrl-C, a client stopping it) or SIGTERM cancelled the serving; a tool
        # running on a worker thread cannot be stopped, so it finished first
        # (unanswered). A further signal ends the process outright, as SIGKILL does (the
        # next write repairs one cut short, docs/scaling.md), not with threading's
        # "Exception ignored ... KeyboardInterrupt" traceback.
        for each in STOPS:
            if signal.getsignal(each) is not signal.SIG_IGN:
                signal.signal(each, signal.SIG_DFL)
        say_stopped(signum)
        raise SystemExit(128 + signum)
