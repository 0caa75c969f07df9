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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from scarwarden.errors import Problem, ValidationError

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
#: How much of one argument list, one tool result and the final reply an episode keeps.
ARGS_CAP, RESULT_CAP, OUTCOME_CAP, TASK_CAP = 400, 160, 4000, 8000
#: Tool calls listed one by one; the rest are counted.
MAX_CALLS = 40
#: The bad messages of one conversation named one by one; the rest are counted (a
#: conversation of 200,000 was 400,000 lines of error and 254 MB).
MAX_PROBLEMS = 20
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


def messages_of(conversation: Any, where: str) -> tuple[Iterable[Any], Mapping[str, Any]]:
    """(messages, conversation-level fields) of one conversation (a list of messages, or
    an iterator of them); refused when it is neither form."""
    if isinstance(conversation, Mapping) and isinstance(conversation.get("messages"), list):
        return conversation["messages"], conversation
    if isinstance(conversation, (list, Iterator)):
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


def message_problems(i: int, msg: Any, where: str) -> list[Problem]:
    """A message is an object in a known role, its ``tool_calls`` a list (text or one
    call there would be walked character by character)."""
    field = f"messages[{i}]"
    if not isinstance(msg, Mapping):
        return [Problem("is not an object", file=where, field=field)]
    problems = []
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
    return problems


def calls_in(i: int, msg: Mapping[str, Any], where: str) -> list[tuple[Any, ToolCall]]:
    """(its ``id``, the call) of each tool call in message ``i``; arguments that are not
    JSON are refused, naming the message."""
    listed = msg.get("tool_calls") or []
    if msg.get("function_call"):
        listed = [{"function": msg["function_call"]}]
    out = []
    for j, call in enumerate(listed if msg.get("role") == "assistant" else []):
        fn = call.get("function") if isinstance(call, Mapping) else None
        field = f"messages[{i}].tool_calls[{j}].function"
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise ValidationError(
                f"{where}: a tool call has no name; nothing was written",
                problems=[Problem("no function name", file=where, field=field)],
            )
        raw, field = fn.get("arguments"), field + ".arguments"
        shown = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        out.append((call.get("id"), ToolCall(fn["name"], _arguments(raw, where, field), None, field, shown)))
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


class Reading:
    """One conversation's episode, read a message at a time (:meth:`add`): what the
    episode shows is kept (the first task, the last reply, the first :data:`MAX_CALLS`
    calls and their results summarised), the rest counted, so a file that is one list
    of messages is read in the memory of its largest message. Each call's arguments
    as given go to ``arguments(field, text)`` (the secret scan) as they are read. The
    refusals come from :meth:`episode`, in the order a whole conversation's would:
    the messages' problems together, then no task, then the first bad tool call."""

    def __init__(self, where: str, arguments: Callable[[str, str], None]) -> None:
        self.where = where
        self._arguments = arguments
        self._count = 0  # messages read
        self._problems: list[Problem] = []
        self._more = 0  # problems past MAX_PROBLEMS, counted
        self._refusal: ValidationError | None = None
        self._users = 0
        self._task: str | None = None
        self._reply = ""
        self._listed: list[tuple[Any, ToolCall]] = []  # the first MAX_CALLS calls, with their id
        self._names: dict[str, int] = {}  # every call's name, counted (writes are counted by name)
        self._results: dict[str, str | None] = {}  # a reply by tool_call_id, summarised
        self._unnamed: list[str] = []  # the replies without one, in order (the first MAX_CALLS)

    def add(self, msg: Any) -> None:
        i, self._count = self._count, self._count + 1
        bad = message_problems(i, msg, self.where)
        kept = max(0, MAX_PROBLEMS - len(self._problems))
        self._problems += bad[:kept]
        self._more += len(bad[kept:])
        if self._problems:
            return  # refused at the end: the rest is only checked
        role, text = msg.get("role"), text_of(msg.get("content")).strip()
        if role == "user":
            self._users += 1
            self._task = self._task or text[:TASK_CAP] or None
        elif role == "assistant" and text:
            self._reply = text
        elif role in ("tool", "function"):
            self._result(msg)
        if self._refusal is None:
            try:
                found = calls_in(i, msg, self.where)
            except ValidationError as exc:
                self._refusal = exc
                return
            for call_id, call in found:
                self._arguments(call.field, call.raw)
                self._names[call.name] = self._names.get(call.name, 0) + 1
                if len(self._listed) < MAX_CALLS:
                    self._listed.append((call_id, call))
                    if len(self._listed) == MAX_CALLS:  # the calls shown are known: their replies alone
                        self._results = {str(i): self._results.get(str(i)) for i, _ in self._listed if i}

    def _result(self, msg: Mapping[str, Any]) -> None:
        """A tool's reply, summarised, kept while a listed call may be its call."""
        text = _one_line(text_of(msg.get("content")), RESULT_CAP)
        if not msg.get("tool_call_id"):
            self._unnamed += [text] if len(self._unnamed) < MAX_CALLS else []
            return
        key = str(msg["tool_call_id"])
        if len(self._listed) == MAX_CALLS and key not in self._results:
            return  # no listed call has this id: never shown
        self._results[key] = text

    def episode(
        self, fields: Mapping[str, Any], writes: Collection[str], correction: str | None
    ) -> dict[str, Any]:
        if self._problems:
            more = [Problem(f"and {self._more:,} more problem(s) in later messages", file=self.where)]
            raise ValidationError(
                f"{self.where}: invalid conversation; nothing was written",
                problems=self._problems + (more if self._more else []),
            )
        if self._task is None:
            said = "its user messages hold no text" if self._users else "the conversation has no user message"
            raise ValidationError(
                f"{self.where}: {said}, so no task; nothing was written",
                hint="an episode's task is the first user message",
            )
        if self._refusal is not None:
            raise self._refusal
        unnamed = iter(self._unnamed)
        calls = [
            replace(call, result=self._results.get(str(call_id)) if call_id else next(unnamed, None))
            for call_id, call in self._listed
        ]
        total = sum(self._names.values())
        made = sum(n for name, n in self._names.items() if name in writes)
        episode: dict[str, Any] = {"task": self._task, "action": action_text(calls, writes, total, made)}
        outcome, reward = self._reply, fields.get("reward")
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
        return episode


def action_text(calls: list[ToolCall], writes: Collection[str], total: int, made: int) -> str:
    """The tool calls (the first :data:`MAX_CALLS` of ``total``; ``made`` of them writes),
    numbered: ``[write]`` marks a write tool, ``->`` its result summarised."""
    if not calls:
        return "Made no tool call."
    parts = []
    for n, call in enumerate(calls[:MAX_CALLS], 1):
        mark = "[write] " if call.name in writes else ""
        text = f"{n}. {mark}{call.name}({_one_line(call.arguments, ARGS_CAP)})"
        if call.result is not None:
            text += f" -> {call.result or '(empty)'}"
        parts.append(text)
    if total > MAX_CALLS:
        parts.append(f"... and {total - MAX_CALLS} more call(s)")
    head = f"{total} tool call(s)" + (f", {made} write(s)" if writes else "")
    return head + ":\n" + "\n".join(parts)


def episode_of(
    conversation: Any,
    where: str,
    *,
    writes: Collection[str] = (),
    correction: str | None = None,
    arguments: Callable[[str, str], None] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The episode input for one conversation (no ``id``/``at``: the importer sets them),
    and the tool calls' arguments as given, by field (for the secret scan; given to
    ``arguments`` instead, as they are read, when it is set). ``conversation`` may be
    an iterator of messages, read one at a time (a file that is one list of them)."""
    messages, fields = messages_of(conversation, where)
    check_fields(fields, where)
    raw: dict[str, str] = {}
    reading = Reading(where, arguments or raw.__setitem__)
    for msg in messages:
        reading.add(msg)
    return reading.episode(fields, writes, correction), raw
