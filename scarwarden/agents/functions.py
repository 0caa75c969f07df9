"""The agent-facing operations as plain function tools: recall, record_episode,
ask_human_answer.

Typed Python methods whose docstrings are the tool descriptions, and their JSON schemas
for OpenAI-compatible function calling, both from the one definition the MCP server's
tools use (:mod:`.tool_specs`); the replies are the MCP tools' (same code,
:class:`~scarwarden.agents.mcp.tools.MemoryTools`). Frameworks that take plain
functions (the OpenAI Agents SDK's ``function_tool``, PydanticAI) take
:meth:`MemoryFunctions.functions`; a hand-written loop sends :meth:`schemas` and runs
the model's calls with :meth:`call` (see :mod:`.tool_loop`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from scarwarden.agents import tool_specs as spec
from scarwarden.agents.mcp.tools import MemoryTools
from scarwarden.api import Memory
from scarwarden.errors import ScarwardenError, UsageError


class MemoryFunctions:
    """The three tools over one memory (thread-safe: the memory serialises its writes)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._tools = MemoryTools(memory.repo, memory=memory)

    def recall(self, task: str, limit: int | None = None) -> dict[str, Any]:
        return self._tools.recall(task, limit)

    recall.__doc__ = spec.RECALL.description

    def record_episode(
        self,
        task: str,
        action: str | None = None,
        outcome: str | None = None,
        correction: str | None = None,
        tags: list[str] | str | None = None,
        refs: list[str] | str | None = None,
        rules_applied: list[str] | str | None = None,
        agent: str | None = None,
        corrected_by: str | None = None,
        source: str | None = None,
        receipt: dict[str, Any] | str | None = None,
        rules_applied_reason: str | None = None,
    ) -> dict[str, Any]:
        fields = dict(locals())
        fields.pop("self")
        return self._tools.record_episode(fields)

    record_episode.__doc__ = spec.RECORD_EPISODE.description

    def ask_human_answer(self, task: str, answer: str) -> dict[str, Any]:
        return self._tools.ask_human_answer(task, answer)

    ask_human_answer.__doc__ = spec.ASK_HUMAN_ANSWER.description

    def functions(self) -> list[Callable[..., dict[str, Any]]]:
        """The three tools as bound methods (name, signature, docstring: the tool)."""
        return [getattr(self, tool.name) for tool in spec.TOOLS]

    @staticmethod
    def schemas() -> list[dict[str, Any]]:
        """The ``tools`` of a chat completions request."""
        return [tool.openai() for tool in spec.TOOLS]

    def call(self, name: str, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
        """Run one tool call as a model sent it (``arguments``: its JSON text). A bad
        call or a :class:`ScarwardenError` is answered ``{"error", "exit_code"}``, for the
        model to read and correct, as an MCP tool error is."""
        try:
            tool = _tool(name)
            args = _arguments(arguments)
            problems = check_arguments(tool, args)
            if problems:
                raise UsageError(f"{name}: " + "; ".join(problems))
            method: Callable[..., dict[str, Any]] = getattr(self, tool.name)
            return method(**args)
        except ScarwardenError as exc:
            return {"error": exc.render().removeprefix("error: "), "exit_code": int(exc.exit_code)}


def _tool(name: str) -> spec.ToolSpec:
    for tool in spec.TOOLS:
        if tool.name == name:
            return tool
    raise UsageError(f"no tool {name!r}", hint="the tools are " + ", ".join(t.name for t in spec.TOOLS))


def _arguments(arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        value = json.loads(arguments)
    except ValueError as exc:
        raise UsageError(f"the arguments are not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise UsageError("the arguments must be a JSON object")
    return value


def check_arguments(tool: spec.ToolSpec, args: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``args`` by the tool's schema (the rules the MCP SDK checks)."""
    known = {p.name: p for p in tool.params}
    problems = [f"unknown argument {key!r}" for key in args if key not in known]
    problems += [f"{p.name!r} is required" for p in tool.params if p.required and args.get(p.name) is None]
    for key, value in args.items():
        if key in known and not _fits(known[key].schema, value):
            problems.append(f"{key!r}: {json.dumps(value)[:60]} does not fit {json.dumps(known[key].schema)}")
    return problems


def _fits(schema: Mapping[str, Any], value: Any) -> bool:
    """Whether ``value`` fits the small JSON schema subset :mod:`.tool_specs` uses."""
    if "anyOf" in schema:
        return any(_fits(option, value) for option in schema["anyOf"])
    kind = schema.get("type")
    checks: dict[str, Callable[[Any], bool]] = {
        "null": lambda v: v is None,
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list) and all(_fits(schema.get("items", {}), i) for i in v),
    }
    if kind is not None and not checks[kind](value):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "minimum" in schema and value < schema["minimum"]:
        return False
    return not ("maximum" in schema and value > schema["maximum"])
