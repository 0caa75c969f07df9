"""An example agent loop against an OpenAI-compatible chat completions server, with the
memory's plain function tools (:class:`~scarwarden.agents.functions.MemoryFunctions`).

The loop an agent framework runs (the OpenAI Agents SDK's ``Runner``, in its simplest
form): send the conversation and the tools' schemas; run every tool call the model
makes (memory's tools, or the agent's own ``actions``) and send back the results; stop
at the first reply without a tool call. The system prompt is the MCP server's
workflow: recall first, act, record with the receipt::

    from scarwarden import open_memory
    from scarwarden.agents.tool_loop import run

    result = run(open_memory("."), "Post our discount code on Twitter",
                 base_url="https://api.openai.com/v1", api_key=key, model="gpt-4o")
    print(result.reply, result.calls)

Kept small on purpose: no streaming, no retries (the model client,
:mod:`scarwarden.llm`, has them for the distiller).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scarwarden.agents.functions import MemoryFunctions
from scarwarden.agents.mcp.tools import WORKFLOW
from scarwarden.api import Memory
from scarwarden.errors import ModelError, ModelUnreachable
from scarwarden.llm.screen import screen_messages

#: An agent's own tool: its JSON schema entry, and the function that runs it.
Action = tuple[dict[str, Any], Callable[..., Any]]


@dataclass
class LoopResult:
    """The final reply, every tool call made (name, arguments, result), the messages."""

    reply: str
    calls: list[tuple[str, dict[str, Any], Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)


def run(
    memory: Memory,
    task: str,
    *,
    base_url: str,
    api_key: str,
    model: str,
    actions: Mapping[str, Action] | None = None,
    max_turns: int = 8,
    timeout: float = 60.0,
) -> LoopResult:
    """Run ``task`` to a final reply (at most ``max_turns`` model calls)."""
    tools = MemoryFunctions(memory)
    own = dict(actions or {})
    schemas = tools.schemas() + [schema for schema, _ in own.values()]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": WORKFLOW},
        {"role": "user", "content": task},
    ]
    result = LoopResult("", messages=messages)
    config, said = memory.repo.config, set[str]()
    for _ in range(max_turns):
        # Screened as the model client screens every request (docs/privacy.md): a key in
        # the task or a tool's result never leaves the machine; ``messages`` keeps it.
        sent = screen_messages(messages, config.secrets.allow, config.privacy, said).messages
        message = _complete(base_url, api_key, model, sent, schemas, timeout)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            result.reply = str(message.get("content") or "")
            return result
        for call in calls:
            name, raw = call["function"]["name"], call["function"].get("arguments") or "{}"
            output = _run_action(own[name][1], raw) if name in own else tools.call(name, raw)
            result.calls.append((name, _loads(raw), output))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(output)})
    raise ModelError(f"the model made tool calls for {max_turns} turns without a final reply")


def _run_action(function: Callable[..., Any], raw: str) -> Any:
    try:
        return function(**_loads(raw))
    except Exception as exc:  # noqa: BLE001 - the agent's own tool: its failure goes back to the model
        return {"error": str(exc)}


def _loads(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _complete(
    base_url: str,
    api_key: str,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    timeout: float,
) -> dict[str, Any]:
    import requests

    from scarwarden.llm.endpoint import shown_url

    body = {"model": model, "messages": messages, "tools": tools}
    try:
        response = requests.post(
            base_url.rstrip("/") + "/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=timeout,
        )
    except requests.RequestException as exc:  # its text may quote the URL: never its password
        said = str(exc).replace(base_url.rstrip("/"), shown_url(base_url.rstrip("/")))
        raise ModelUnreachable(f"the model endpoint did not answer: {said}") from None
    if response.status_code != 200:  # some servers echo the key: never quoted
        said = response.text[:200].replace(api_key, "***") if api_key else response.text[:200]
        raise ModelError(f"the model answered HTTP {response.status_code}: {said}")
    try:
        message = response.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ModelError("the model's answer is not a chat completion") from None
    return dict(message)
