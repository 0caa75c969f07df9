"""The MCP tools' typed, described arguments and their annotations: the SDK derives each
tool's JSON schema from these (:mod:`scarwarden.agents.mcp.register`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

Task = Annotated[
    str,
    Field(
        description=(
            "The task in plain words, as you would describe it to a colleague, e.g. "
            "'Draft a LinkedIn post announcing our beta'."
        )
    ),
]
Limit = Annotated[
    int | None,
    Field(
        ge=1,
        le=100,
        description=("At most this many rules (default: the repository's recall.limit setting)."),
    ),
]
RuleId = Annotated[str, Field(description="A rule ID such as 'PB-01'.")]
EpisodeId = Annotated[str, Field(description="An episode ID such as 'ep-7k2m9q4x1z'.")]
Action = Annotated[str | None, Field(description="What you (the agent) did.")]
Outcome = Annotated[str | None, Field(description="What happened as a result.")]
Correction = Annotated[
    str | None, Field(description=("What a human corrected or what should be done instead: the lesson."))
]
# List arguments also take one comma-separated string ("linkedin,post"), as the CLI does.
Tags = Annotated[
    list[str] | str | None,
    Field(
        description=(
            "Topic tags: lower-case slugs of a-z, 0-9 and '-', e.g. ['linkedin', 'post'] or "
            "'linkedin,post'. Reuse the tags of the rules recall returned where they fit."
        )
    ),
]
Refs = Annotated[
    list[str] | str | None,
    Field(
        description=(
            "IDs of related episodes (ep-...), a list or one comma-separated string, e.g. the "
            "episodes of a rule that turned out wrong."
        )
    ),
]
RulesApplied = Annotated[
    list[str] | str | None,
    Field(
        description=(
            "IDs of the rules (PB-NN) you followed while acting, a list or one comma-separated "
            "string: the lineage from decision to rule."
        )
    ),
]
Agent = Annotated[str | None, Field(description="Your name or role, e.g. 'writer'.")]
ReceiptArg = Annotated[
    dict[str, Any] | str | None,
    Field(
        description=(
            "The `receipt` object `recall` returned for this task, unchanged (or its ID): "
            "it proves which rules you were given. Stored as the episode's `recalled:` block."
        )
    ),
]
RulesAppliedReason = Annotated[
    str | None,
    Field(description="Why you applied a rule the receipt does not hold (e.g. a human told you to)."),
]
CorrectedBy = Annotated[str | None, Field(description="Who made the correction.")]
Source = Annotated[
    Literal["outcome", "correction", "human-answer", "import"] | None,
    Field(description="What kind of episode this is: an observed outcome or a human correction."),
]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
APPEND = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
