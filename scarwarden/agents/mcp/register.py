"""What an agent sees of the memory over MCP: the tools (whose descriptions are the text an
agent reads to decide when to call each), the resources and the prompt, registered on a
server built by :mod:`scarwarden.agents.mcp.server`. A :class:`ScarwardenError` becomes
the SDK's ``ToolError``/``ResourceError`` with the CLI's message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field

from scarwarden.agents import tool_specs as spec
from scarwarden.agents.mcp.args import (
    APPEND,
    READ_ONLY,
    Action,
    Agent,
    Answer,
    CorrectedBy,
    Correction,
    EpisodeId,
    Limit,
    Outcome,
    ReceiptArg,
    Refs,
    RuleId,
    RulesApplied,
    RulesAppliedReason,
    Source,
    Tags,
    Task,
)
from scarwarden.agents.mcp.tools import WORKFLOW, MemoryTools
from scarwarden.errors import GitError, ScarwardenError

T = TypeVar("T")


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
    if isinstance(exc, GitError):
        exc.hint = _no_terminal_hint(exc.message) or exc.hint
    return exc.render().removeprefix("error: ")


def _no_terminal_hint(message: str) -> str | None:
    """What to do when a write failed for want of a terminal: the server runs git and its
    hooks in a session of their own (a Ctrl-C must not kill the write in flight), and a
    server a client started has no terminal at all. The CLI's hint ("its message above
    says why", "fix gpg (gpg.program, user.signingKey)") does not say so."""
    if "hook refused the commit" in message and "/dev/tty" in message:
        return (
            "scarwarden mcp runs git hooks without a terminal, so a hook cannot ask a question "
            "on /dev/tty: make it skip the question when /dev/tty cannot be opened, or record "
            "this from a terminal with 'scarwarden episode add'; nothing was committed"
        )
    if "gpg failed to sign" in message:
        return (
            "gpg could not sign (commit.gpgSign): a server an MCP client started has no terminal "
            "to ask the key's passphrase on (pinentry-tty, -curses); unlock the key in gpg-agent "
            "first, use a pinentry needing no terminal, or git config commit.gpgSign false"
        )
    return None


def add_loop_tools(server: MCPServer, tools: MemoryTools) -> None:
    """The agent's loop: recall before acting, record what happened, record a human's answer."""
    _add_recall_tool(server, tools)
    _add_record_tool(server, tools)
    _add_answer_tool(server, tools)
    _add_confirm_tool(server, tools)


def _add_recall_tool(server: MCPServer, tools: MemoryTools) -> None:
    """``recall``: the rules for a task, called before acting."""

    @server.tool(
        annotations=READ_ONLY,
        description=spec.RECALL.description,
    )
    def recall(task: Task, limit: Limit = None) -> dict[str, Any]:
        return _tool_call(lambda: tools.recall(task, limit))


def _add_record_tool(server: MCPServer, tools: MemoryTools) -> None:
    """``record_episode``: what happened, committed to the ledger."""

    @server.tool(
        annotations=APPEND,
        description=spec.RECORD_EPISODE.description,
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


def _add_answer_tool(server: MCPServer, tools: MemoryTools) -> None:
    """``ask_human_answer``: a human's answer after ASK_HUMAN, recorded as an episode."""

    @server.tool(
        annotations=APPEND,
        description=spec.ASK_HUMAN_ANSWER.description,
    )
    def ask_human_answer(
        task: Task,
        answer: Answer,
    ) -> dict[str, Any]:
        return _tool_call(lambda: tools.ask_human_answer(task, answer))


def _add_confirm_tool(server: MCPServer, tools: MemoryTools) -> None:
    """``confirm_rule``: a human confirms a candidate rule recall showed on ASK_HUMAN."""

    @server.tool(
        annotations=APPEND,
        description=(
            "After `recall` said ASK_HUMAN and a human confirmed that one of its `candidates` "
            "(a rule) applies to the task, record that as a new committed episode citing the "
            "rule, so the task's words reach it next time. Returns {id, path, commit, episode, "
            "confirmed, warnings} (warnings: personal data the privacy settings record with a "
            "warning, which field and kind; tell the human). An unknown or retired rule, or one "
            "recall did not show for the task, is refused; nothing is written."
        ),
    )
    def confirm_rule(task: Task, rule_id: RuleId) -> dict[str, Any]:
        return _tool_call(lambda: tools.confirm_rule(task, rule_id))


def add_audit_tools(server: MCPServer, tools: MemoryTools) -> None:
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


def add_visual_tool(server: MCPServer, tools: MemoryTools) -> None:
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


def add_distill_tool(server: MCPServer, tools: MemoryTools) -> None:
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


def add_resources(server: MCPServer, tools: MemoryTools, playbook_rel: str) -> None:
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


def add_prompt(server: MCPServer) -> None:
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
