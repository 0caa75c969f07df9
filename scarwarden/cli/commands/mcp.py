"""``scarwarden mcp``: the memory as an MCP server over stdio (the optional ``mcp`` extra)."""

from __future__ import annotations

import os

import click

from scarwarden.cli.commands._common import get_repo
from scarwarden.repo import open_repo


@click.command("mcp")
@click.option(
    "--repo",
    "local_repo",
    metavar="PATH",
    type=click.Path(file_okay=False),
    help="The memory repository to serve (same as the global 'scarwarden --repo "
    "PATH mcp'; handy in client configs). Default: the current directory.",
)
@click.option(
    "--allow-distill-commit",
    is_flag=True,
    help="Let the distill tool commit playbook changes (dry_run=false). Without "
    "it, agents can only ask for proposals.",
)
@click.option(
    "--sync",
    "sync_writes",
    is_flag=True,
    help="After each write (an episode, a distillation), run 'scarwarden sync' with origin.",
)
@click.pass_context
def mcp_cmd(
    ctx: click.Context, local_repo: str | None, allow_distill_commit: bool, sync_writes: bool
) -> None:
    """Serve this memory to agents over the Model Context Protocol (stdio).

    Any MCP client (Claude Code, Cursor, VS Code, Codex, your own agent) starts this
    command and talks JSON-RPC over its stdin/stdout; nothing else is printed there.
    Tools: recall, record_episode, ask_human_answer, get_rule, get_episode,
    verify_citations, distill (proposals only unless --allow-distill-commit).
    Resources: scarwarden://playbook, scarwarden://rule/{id}, scarwarden://episode/{id}.
    Prompt: use_memory. Needs the SDK: pip install 'scarwarden[mcp]'.
    Registering it with each client: docs/mcp.md.

    \b
    Examples:
      scarwarden mcp                                  # serve the repo you are in
      scarwarden --repo ~/team-memory mcp
      scarwarden mcp --repo ~/team-memory --allow-distill-commit
      claude mcp add scarwarden -- scarwarden mcp --repo ~/team-memory
    """
    from scarwarden.errors import UsageError

    # Open the repo first, so a wrong path fails with a clear message and exit 2
    # instead of a server that dies on the first request.
    repo = open_repo(local_repo) if local_repo else get_repo(ctx)
    try:
        from scarwarden.agents.mcp.server import serve
    except ImportError as exc:
        from scarwarden.cli.commands._install import install_hint

        raise UsageError(f"the MCP SDK is not installed ({exc})", hint=install_hint("mcp")) from None
    serve(repo, allow_distill_commit=allow_distill_commit, environ=os.environ, sync=sync_writes)
