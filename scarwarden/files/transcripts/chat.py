"""OpenAI chat-format conversations as episodes: ``episode import --format openai-chat``.

A conversation is a list of messages (``role``, ``content``, an assistant's
``tool_calls`` with ``function.name`` and ``function.arguments``, a tool's reply with
``tool_call_id``), or an object holding one as ``messages`` beside optional
``correction``, ``corrected_by``, ``tags``, ``agent`` and ``reward``. The episode: the
task is the first user message, the action the tool calls (names, the arguments given,
each result summarised, ``[write]`` before the tools named as writes), the outcome the
last assistant reply (and the reward when given); a correction only where the input
holds one. Nothing is invented: a conversation with no user message is refused.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from scarwarden.errors import Problem, ValidationError

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
#: How much of one argument list, one tool result and the final reply an episode keeps.
ARGS_CAP, RESULT_CAP, OUTCOME_CAP, TASK_CAP = 400, 160, 4000, 8000
#: Tool calls listed one by one; the rest are counted.
MAX_CALLS = 40
#: The conversation-level fields an episode takes as given.
CARRIED = ("correction", "corrected_by", "agent")


@dataclass(frozen=True)
class ToolCall:
    """One tool call: name, the arguments given (as text), its result (if any)."""

    name: str
    arguments: str
    result: str | None = None
    #: Where the arguments are (``messages[3].tool_calls[0].function.arguments``) and
    #: their text as given: the secret scan reads all of it, not the summary.
    field: str = ""
    raw: str = ""


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return str(content)


def messages_of(conversation: Any, where: str) -> tuple[list[Mapping[str, Any]], Mapping[str, Any]]:
    """(messages, conversation-level fields) of one conversation; refused when it is neither form."""
    if isinstance(conversation, Mapping) and isinstance(conversation.get("messages"), list):
        return conversation["messages"], conversation
    if isinstance(conversation, list):
        return conversation, {}
    raise ValidationError(
        f"{where}: not a conversation; nothing was written",
        hint="give a list of messages, or an object with 'messages' (one per line in JSON lines)",
    )


def check_fields(fields: Mapping[str, Any], where: str) -> None:
    """The conversation-level fields, when given, have their types: text for
    ``correction``, ``corrected_by`` and ``agent``, a list for ``tags``, a finite number
    for ``reward``. A value of another type is refused, never dropped: a correction
    given as 5 would otherwise be an episode without its correction."""
    wanted = {**{key: "text" for key in CARRIED}, "tags": "a list of tags", "reward": "a finite number"}
    problems = []
    for key, kind in wanted.items():
        value = fields.get(key)
        if value is None:
            continue
        if key == "reward":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        else:
            ok = isinstance(value, list if key == "tags" else str)
        if not ok:
            problems.append(Problem(f"must be {kind}, got {value!r:.60}", file=where, field=key))
    if problems:
        raise ValidationError(f"{where}: invalid conversation; nothing was written", problems=problems)


def check_messages(messages: list[Any], where: str) -> None:
    """Every message is an object in a known role, its ``tool_calls`` a list (problems
    together: text or one call there would be walked character by character)."""
    problems = []
    for i, msg in enumerate(messages):
        field = f"messages[{i}]"
        if not isinstance(msg, Mapping):
            problems.append(Problem("is not an object", file=where, field=field))
            continue
        listed = msg.get("tool_calls")
        if listed is not None and not isinstance(listed, list):
            problems.append(
                Problem(
                    f"must be a list of tool calls, got {listed!r:.60}",
                    file=where,
                    field=f"{field}.tool_calls",
                )
            )
        if msg.get("role") not in ROLES:
            problems.append(
                Problem(
                    f"unknown role {msg.get('role')!r}",
                    file=where,
                    field=f"{field}.role",
                    hint="the roles are " + ", ".join(ROLES),
                )
            )
    if problems:
        raise ValidationError(f"{where}: invalid conversation; nothing was written", problems=problems)


def tool_calls(messages: list[Mapping[str, Any]], where: str) -> list[ToolCall]:
    """The calls in order, each with the reply its ``tool_call_id`` (or position) points to;
    arguments that are not JSON are refused, naming the message."""
    calls: list[tuple[str | None, str, str, str, str]] = []
    results: dict[str, str] = {}
    unnamed: list[str] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        listed = msg.get("tool_calls") or []
        if msg.get("function_call"):
            listed = [{"function": msg["function_call"]}]
        for j, call in enumerate(listed if role == "assistant" else []):
            fn = call.get("function") if isinstance(call, Mapping) else None
            field = f"messages[{i}].tool_calls[{j}].function"
            if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
                raise ValidationError(
                    f"{where}: a tool call has no name; nothing was written",
                    problems=[Problem("no function name", file=where, field=field)],
                )
            raw, field = fn.get("arguments"), field + ".arguments"
            shown = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
            calls.append((call.get("id"), fn["name"], _arguments(raw, where, field), field, shown))
        if role in ("tool", "function"):
            text = text_of(msg.get("content"))
            if msg.get("tool_call_id"):
                results[str(msg["tool_call_id"])] = text
            else:
                unnamed.append(text)
    out = []
    for call_id, name, args, field, raw in calls:
        result = results.get(str(call_id)) if call_id else (unnamed.pop(0) if unnamed else None)
        out.append(ToolCall(name, args, result, field, raw))
    return out


def _arguments(raw: Any, where: str, field: str) -> str:
    """The arguments as compact JSON; text that is not JSON is refused."""
    if raw is None or raw == "":
        return "{}"
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
            raise ValidationError(
                f"{where}: tool-call arguments are not valid JSON; nothing was written",
                problems=[Problem(reason, file=where, field=field)],
            ) from None
    return json.dumps(raw, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _one_line(text: str, cap: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= cap else flat[: cap - 3] + "..."


def action_text(calls: list[ToolCall], writes: Collection[str]) -> str:
    """The tool calls, numbered: ``[write]`` marks a write tool, ``->`` its result summarised."""
    if not calls:
        return "Made no tool call."
    parts = []
    for n, call in enumerate(calls[:MAX_CALLS], 1):
        mark = "[write] " if call.name in writes else ""
        text = f"{n}. {mark}{call.name}({_one_line(call.arguments, ARGS_CAP)})"
        if call.result is not None:
            text += f" -> {_one_line(call.result, RESULT_CAP) or '(empty)'}"
        parts.append(text)
    if len(calls) > MAX_CALLS:
        parts.append(f"... and {len(calls) - MAX_CALLS} more call(s)")
    writes_made = sum(1 for c in calls if c.name in writes)
    head = f"{len(calls)} tool call(s)" + (f", {writes_made} write(s)" if writes else "")
    return head + ":\n" + "\n".join(parts)


def episode_of(
    conversation: Any, where: str, *, writes: Collection[str] = (), correction: str | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The episode input for one conversation (no ``id``/``at``: the importer sets them),
    and the tool calls' arguments as given, by field (for the secret scan)."""
    messages, fields = messages_of(conversation, where)
    check_fields(fields, where)
    check_messages(messages, where)
    users = [text_of(m.get("content")).strip() for m in messages if m.get("role") == "user"]
    task = next((u for u in users if u), None)
    if task is None:
        said = "its user messages hold no text" if users else "the conversation has no user message"
        raise ValidationError(
            f"{where}: {said}, so no task; nothing was written",
            hint="an episode's task is the first user message",
        )
    calls = tool_calls(messages, where)
    episode: dict[str, Any] = {"task": task[:TASK_CAP], "action": action_text(calls, writes)}
    replies = [text_of(m.get("content")).strip() for m in messages if m.get("role") == "assistant"]
    outcome = next((r for r in reversed(replies) if r), "")
    reward = fields.get("reward")
    if reward is not None:
        outcome = f"Reward {reward:g}." + (f" Final reply: {outcome}" if outcome else "")
    episode["outcome"] = _one_line(outcome, OUTCOME_CAP) if outcome else "No final reply."
    for key in CARRIED:
        if isinstance(fields.get(key), str) and fields[key].strip():
            episode[key] = fields[key]
    if correction:
        episode["correction"] = correction
    if fields.get("tags") is not None:
        episode["tags"] = fields["tags"]
    episode["source"] = "correction" if episode.get("correction") else "import"
    return episode, {call.field: call.raw for call in calls}
