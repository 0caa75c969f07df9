"""The MCP tools' typed, described arguments and their annotations: the SDK derives each
tool's JSON schema from these (:mod:`scarwarden.agents.mcp.register`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from scarwarden.agents import tool_specs as spec

# The descriptions and bounds are the shared tool definitions' (tool_specs.py): the
# function tools' JSON schemas read the same ones.
Task = Annotated[str, Field(description=spec.TASK.description)]
Limit = Annotated[int | None, Field(ge=spec.LIMIT_MIN, le=spec.LIMIT_MAX, description=spec.LIMIT.description)]
RuleId = Annotated[str, Field(description="A rule ID such as 'PB-01'.")]
EpisodeId = Annotated[str, Field(description="An episode ID such as 'ep-7k2m9q4x1z'.")]
Action = Annotated[str | None, Field(description=spec.ACTION.description)]
Outcome = Annotated[str | None, Field(description=spec.OUTCOME.description)]
Correction = Annotated[str | None, Field(description=spec.CORRECTION.description)]
# List arguments also take one comma-separated string ("linkedin,post"), as the CLI does.
Tags = Annotated[list[str] | str | None, Field(description=spec.TAGS.description)]
Refs = Annotated[list[str] | str | None, Field(description=spec.REFS.description)]
RulesApplied = Annotated[list[str] | str | None, Field(description=spec.RULES_APPLIED.description)]
Agent = Annotated[str | None, Field(description=spec.AGENT.description)]
ReceiptArg = Annotated[dict[str, Any] | str | None, Field(description=spec.RECEIPT.description)]
RulesAppliedReason = Annotated[str | None, Field(description=spec.RULES_APPLIED_REASON.description)]
CorrectedBy = Annotated[str | None, Field(description=spec.CORRECTED_BY.description)]
#: The episode sources (files.episode_fields.SOURCES: a test holds them equal).
Source = Annotated[
    Literal["outcome", "correction", "human-answer", "import"] | None,
    Field(description=spec.SOURCE.description),
]
Answer = Annotated[str, Field(description=spec.ANSWER.description)]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
APPEND = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
