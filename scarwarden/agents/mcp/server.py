"""``scarwarden mcp``: the memory as a Model Context Protocol server over stdio.

Built on the official SDK (``mcp`` 2.x, ``pip install 'scarwarden[mcp]'``): its
high-level ``MCPServer`` (FastMCP in 1.x) derives each tool's JSON schema from the
typed, described parameters below. What the tools do lives in
:mod:`scarwarden.agents.mcp.tools`; this module only wires them up and turns a
:class:`ScarwardenError` into the SDK's ``ToolError`` (``is_error=True`` with the CLI's
message), because any other exception reaches the client as a bare "Error executing
tool". Importing the SDK costs ~0.5 s, so only the ``mcp`` command imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from scarwarden import __version__
from scarwarden.agents.mcp.tools import WORKFLOW, MemoryTools
from scarwarden.errors import ScarwardenError
from scarwarden.repo import MemoryRepo

T = TypeVar("T")

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


def _tool_call(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except ScarwardenError as exc:
        raise ToolError(_message(exc)) from None


def _resource_read(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except ScarwardenError as exc:
        raise ResourceError(_message(exc)) from None


def _message(exc: ScarwardenError) -> str:
    """The CLI's message without its ``error: `` prefix: the client already shows it
    as an error (``is_error``), and "Error executing tool ...: error: ..." said it twice."""
    return exc.render().removeprefix("error: ")


class _Server(MCPServer):
    """The SDK's server, with errors an agent can act on (issue 18).

    The SDK prefixes every tool error with "Error executing tool NAME: " and reports
    bad arguments as pydantic's multi-line dump (with a URL and the caller's values).
    Here a tool error is its own message, and bad arguments are one sentence naming each
    argument and what is wrong, plus a hint listing the tool's arguments.
    """

    async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().call_tool(name, arguments, *args, **kwargs)
        except ToolError as exc:
            if type(exc) is not ToolError:  # UnexpectedToolError: the SDK hides crashes
                raise
            cause = exc.__cause__
            if isinstance(cause, ToolError):
                raise ToolError(str(cause)) from cause
            if isinstance(cause, ValidationError):
                raise ToolError(_arguments_message(self, name, cause)) from cause
            raise


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
    _add_loop_tools(server, tools)
    _add_audit_tools(server, tools)
    _add_distill_tool(server, tools)
    _add_visual_tool(server, tools)
    _add_resources(server, tools, repo.playbook_rel)
    _add_prompt(server)
    _refuse_unknown_arguments(server)
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


def _add_loop_tools(server: MCPServer, tools: MemoryTools) -> None:
    """The agent's loop: recall before acting, record what happened, record a human's answer."""
    # Longer than ~60 lines on purpose: three registrations whose descriptions are the
    # text an agent reads to decide when to call each tool; they read best side by side.

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "Recall the playbook rules that apply to a task. Call it BEFORE acting on a task. "
            "Returns the verdict (ACT: strong match, follow the rules; ACT_AND_FLAG: weak "
            "match, act but state your assumptions; ASK_HUMAN: memory has nothing relevant, "
            "ask a human), the ranked rules with their text, the episodes each was learnt in "
            "and why it matched (tags, terms, score), `cite_as` (the exact inline citation of "
            "each rule) and `instructions` saying what to do next. Deterministic; no model."
        ),
    )
    def recall(task: Task, limit: Limit = None) -> dict[str, Any]:
        return _tool_call(lambda: tools.recall(task, limit))

    @server.tool(
        annotations=APPEND,
        description=(
            "Record an episode in the append-only ledger: the task you were given and at "
            "least one of action (what you did), outcome (what happened) and correction "
            "(what a human corrected: the lesson). It is validated and committed to git like "
            "`scarwarden episode add`; nothing is written when it is invalid. Call it after "
            "acting, above all when a human corrected you or the outcome was bad. Returns "
            "{id, path, commit, episode}."
        ),
    )
    def record_episode(
        task: Task,
        action: Action = None,
        outcome: Outcome = None,
        correction: Correction = None,
        tags: Tags = None,
        refs: Refs = None,
        rules_applied: RulesApplied = None,
        agent: Agent = None,
        corrected_by: CorrectedBy = None,
        source: Source = None,
        receipt: ReceiptArg = None,
        rules_applied_reason: RulesAppliedReason = None,
    ) -> dict[str, Any]:
        fields = {
            "task": task,
            "action": action,
            "outcome": outcome,
            "correction": correction,
            "tags": tags,
            "refs": refs,
            "rules_applied": rules_applied,
            "agent": agent,
            "corrected_by": corrected_by,
            "source": source,
            "receipt": receipt,
            "rules_applied_reason": rules_applied_reason,
        }
        return _tool_call(lambda: tools.record_episode(fields))

    @server.tool(
        annotations=APPEND,
        description=(
            "After `recall` said ASK_HUMAN and you asked a human, record their answer word "
            "for word as a new committed episode (source: human-answer), so memory knows "
            "next time. Returns {id, path, commit, episode}."
        ),
    )
    def ask_human_answer(
        task: Task,
        answer: Annotated[str, Field(description="The human's answer, word for word.")],
    ) -> dict[str, Any]:
        return _tool_call(lambda: tools.ask_human_answer(task, answer))


def _add_audit_tools(server: MCPServer, tools: MemoryTools) -> None:
    """Reading the evidence: a rule's audit, an episode, checking an answer's citations."""

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "The audit of one rule: its text, tags and citations, every episode it was "
            "learnt in word for word (`yaml`: the stored file), and its git history (the "
            "commits that introduced, changed or retired it)."
        ),
    )
    def get_rule(rule_id: RuleId) -> dict[str, Any]:  # named as in scarwarden://rule/{rule_id}
        return _tool_call(lambda: tools.get_rule(rule_id))

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "One episode word for word (`yaml`: the stored file, and its fields), its path "
            "in the ledger, and the rules that cite it."
        ),
    )
    def get_episode(episode_id: EpisodeId) -> dict[str, Any]:
        return _tool_call(lambda: tools.get_episode(episode_id))

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "Check, by code, the inline citations in a text you wrote for a task: every "
            "`[PB-NN, learnt in ep-...]` must name a rule recalled for that task and only "
            "episodes that rule lists. Returns ok, the verified citations, the invented ones "
            "with the reason, and recalled rules the text did not cite. Call it before "
            "sending an answer that cites memory."
        ),
    )
    def verify_citations(
        task: Task,
        text: Annotated[str, Field(description="Your answer, with its inline citations.")],
    ) -> dict[str, Any]:
        return _tool_call(lambda: tools.verify_citations(task, text))


def _add_visual_tool(server: MCPServer, tools: MemoryTools) -> None:
    """``audit_image`` (issue 19): an image checked against the learnt visual rules."""

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "Check an image (PNG, JPEG, WebP or GIF) against the rules the team learnt: every "
            "visual rule and the rules the task recalls. Give the image as `path` (a file inside "
            "the repository) or `data_base64`. With a vision model configured each rule gets a "
            "verdict (pass, violates, unclear) with the reason, the visible evidence and its "
            "citation `[PB-NN, learnt in ep-...]`, checked by code; without one, `judged` is "
            "false and only the rules that apply are listed: nothing was looked at."
        ),
    )
    def audit_image(
        task: Task,
        path: Annotated[str | None, Field(description="An image file inside the repository.")] = None,
        data_base64: Annotated[
            str | None, Field(description="The image's bytes, base64 (or a data: URL).")
        ] = None,
    ) -> dict[str, Any]:
        return _tool_call(lambda: tools.audit_image(task, path, data_base64))


def _add_distill_tool(server: MCPServer, tools: MemoryTools) -> None:
    """Proposals from undistilled episodes; a commit only with --allow-distill-commit."""

    @server.tool(
        annotations=APPEND,
        description=(
            "Propose playbook changes from the episodes no rule cites yet: new rules, edits "
            "and retirements, each citing its episodes. dry_run=true (the default) only "
            "proposes and writes nothing. dry_run=false commits them as one `distill:` commit "
            "and works only if the server was started with --allow-distill-commit; otherwise "
            "it is refused. Uses the configured model, or the offline distiller when no API "
            "key is set or offline=true."
        ),
    )
    def distill(
        dry_run: Annotated[
            bool, Field(description=("true: propose only. false: commit (needs --allow-distill-commit)."))
        ] = True,
        offline: Annotated[
            bool | None,
            Field(
                description=(
                    "true: use the offline distiller (no model); default: the model when a key is configured."
                )
            ),
        ] = None,
        branch: Annotated[
            str | None, Field(description=("Commit on a new branch of this name instead of the current one."))
        ] = None,
    ) -> dict[str, Any]:
        return _tool_call(lambda: tools.distill(dry_run=dry_run, offline=offline, branch=branch))


def _add_resources(server: MCPServer, tools: MemoryTools, playbook_rel: str) -> None:
    """The playbook, one rule with its episodes, and one episode, as readable resources."""

    @server.resource(
        "scarwarden://playbook",
        name="playbook",
        title="Playbook",
        mime_type="text/markdown",
        description=f"{playbook_rel}: every rule with its tags and citations.",
    )
    def playbook_resource() -> str:
        return _resource_read(tools.playbook_markdown)

    @server.resource(
        "scarwarden://rule/{rule_id}",
        name="rule",
        title="Rule audit",
        mime_type="text/markdown",
        description="One rule (e.g. scarwarden://rule/PB-01) and every episode "
        "it was learnt in, word for word.",
    )
    def rule_resource(rule_id: str) -> str:
        return _resource_read(lambda: tools.rule_markdown(rule_id))

    @server.resource(
        "scarwarden://episode/{episode_id}",
        name="episode",
        title="Episode",
        mime_type="application/yaml",
        description="One episode file word for word (e.g. scarwarden://episode/ep-7k2m9q4x1z).",
    )
    def episode_resource(episode_id: str) -> str:
        return _resource_read(lambda: tools.episode_yaml(episode_id))


def _add_prompt(server: MCPServer) -> None:
    """``use_memory``: the workflow, optionally aimed at one task."""

    @server.prompt(
        name="use_memory",
        title="Use Scarwarden memory",
        description=(
            "How to use this memory on a task: recall first, follow the verdict, cite rules "
            "as [PB-NN, learnt in ep-...], record what happened."
        ),
    )
    def use_memory(task: str = "") -> str:
        text = WORKFLOW
        if task.strip():
            text += (
                f"\n\nThe task: {task.strip()}\nStart by calling `recall` with this "
                "task, then follow its instructions."
            )
        return text


def serve(
    repo: MemoryRepo,
    *,
    allow_distill_commit: bool = False,
    environ: Mapping[str, str] | None = None,
    sync: bool = False,
) -> None:
    """Serve ``repo`` over stdin/stdout until the client closes the connection."""
    build_server(repo, allow_distill_commit=allow_distill_commit, environ=environ, sync=sync).run("stdio")
