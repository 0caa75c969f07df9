"""The agent-facing tools, defined once: recall, record_episode, ask_human_answer.

Each :class:`ToolSpec` holds the tool's description and its arguments (JSON schema,
description, required or not). The MCP server's tools (:mod:`.mcp.register`, their
argument types in :mod:`.mcp.args`), the plain function tools (:mod:`.functions`,
whose docstrings are these descriptions) and their JSON schemas for OpenAI-compatible
function calling (:meth:`ToolSpec.openai`) all read them from here: there is no second
copy of a description or an argument rule. Plain data: no SDK, no pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scarwarden.files.episode_fields import SOURCES


@dataclass(frozen=True)
class Param:
    """One argument: its JSON schema (without the description), its description."""

    name: str
    schema: dict[str, Any]
    description: str
    required: bool = False


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[Param, ...]

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def json_schema(self) -> dict[str, Any]:
        """The arguments as one JSON schema object."""
        return {
            "type": "object",
            "properties": {p.name: {**p.schema, "description": p.description} for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def openai(self) -> dict[str, Any]:
        """The entry of a chat completions request's ``tools`` list."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.json_schema(),
            },
        }


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


_STRING = {"type": "string"}
_LIST = _nullable({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]})

TASK = Param(
    "task",
    _STRING,
    "The task in plain words, as you would describe it to a colleague, e.g. "
    "'Draft a LinkedIn post announcing our beta'.",
    required=True,
)
#: recall's ``limit``: the bounds are the MCP argument's (``ge``/``le``) too.
LIMIT_MIN, LIMIT_MAX = 1, 100
LIMIT = Param(
    "limit",
    _nullable({"type": "integer", "minimum": LIMIT_MIN, "maximum": LIMIT_MAX}),
    "At most this many rules (default: the repository's recall.limit setting).",
)
ACTION = Param("action", _nullable(_STRING), "What you (the agent) did.")
OUTCOME = Param("outcome", _nullable(_STRING), "What happened as a result.")
CORRECTION = Param(
    "correction", _nullable(_STRING), "What a human corrected or what should be done instead: the lesson."
)
TAGS = Param(
    "tags",
    _LIST,
    "Topic tags: lower-case slugs of a-z, 0-9 and '-', e.g. ['linkedin', 'post'] or "
    "'linkedin,post'. Reuse the tags of the rules recall returned where they fit.",
)
REFS = Param(
    "refs",
    _LIST,
    "IDs of related episodes (ep-...), a list or one comma-separated string, e.g. the "
    "episodes of a rule that turned out wrong.",
)
RULES_APPLIED = Param(
    "rules_applied",
    _LIST,
    "IDs of the rules (PB-NN) you followed while acting, a list or one comma-separated "
    "string: the lineage from decision to rule.",
)
AGENT = Param("agent", _nullable(_STRING), "Your name or role, e.g. 'writer'.")
CORRECTED_BY = Param("corrected_by", _nullable(_STRING), "Who made the correction.")
SOURCE = Param(
    "source",
    _nullable({"type": "string", "enum": list(SOURCES)}),
    "What kind of episode this is: an observed outcome or a human correction.",
)
RECEIPT = Param(
    "receipt",
    _nullable({"anyOf": [{"type": "object", "additionalProperties": True}, _STRING]}),
    "The `receipt` object `recall` returned for this task, unchanged (or its ID): "
    "it proves which rules you were given. Stored as the episode's `recalled:` block.",
)
RULES_APPLIED_REASON = Param(
    "rules_applied_reason",
    _nullable(_STRING),
    "Why you applied a rule the receipt does not hold (e.g. a human told you to).",
)
ANSWER = Param("answer", _STRING, "The human's answer, word for word.", required=True)

RECALL = ToolSpec(
    "recall",
    "Recall the playbook rules that apply to a task. Call it BEFORE acting on a task. "
    "Returns the verdict (ACT: strong match, follow the rules; ACT_AND_FLAG: weak "
    "match, act but state your assumptions; ASK_HUMAN: memory has nothing relevant, "
    "ask a human), the ranked rules with their text, the episodes each was learnt in "
    "and why it matched (tags, terms, score), `cite_as` (the exact inline citation of "
    "each rule) and `instructions` saying what to do next. Deterministic; no model.",
    (TASK, LIMIT),
)
RECORD_EPISODE = ToolSpec(
    "record_episode",
    "Record an episode in the append-only ledger: the task you were given and at "
    "least one of action (what you did), outcome (what happened) and correction "
    "(what a human corrected: the lesson). It is validated and committed to git like "
    "`scarwarden episode add`; nothing is written when it is invalid. Call it after "
    "acting, above all when a human corrected you or the outcome was bad. Returns "
    "{id, path, commit, episode, warnings}: warnings lists personal data (an email "
    "address, a card number) the memory's privacy settings record with a warning.",
    (
        TASK,
        ACTION,
        OUTCOME,
        CORRECTION,
        TAGS,
        REFS,
        RULES_APPLIED,
        AGENT,
        CORRECTED_BY,
        SOURCE,
        RECEIPT,
        RULES_APPLIED_REASON,
    ),
)
ASK_HUMAN_ANSWER = ToolSpec(
    "ask_human_answer",
    "After `recall` said ASK_HUMAN and you asked a human, record their answer word "
    "for word as a new committed episode (source: human-answer), so memory knows "
    "next time. Returns {id, path, commit, episode, warnings}: warnings lists personal "
    "data the answer holds that the memory's privacy settings record with a warning (an "
    "email address, a card number: which field, which kind); tell the human.",
    (TASK, ANSWER),
)
#: The agent-facing tools, in the order an agent uses them.
TOOLS = (RECALL, RECORD_EPISODE, ASK_HUMAN_ANSWER)
