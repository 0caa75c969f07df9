"""``scarwarden mcp``: the memory as an MCP server over stdio (the optional ``mcp`` extra)."""

from __future__ import annotations

import os
import signal
import sys

import click

from scarwarden.agents.mcp.interrupt import stop_at_start, stopped_at_start
from scarwarden.cli.commands._common import get_repo
from scarwarden.repo import MemoryRepo, open_repo


class _McpCommand(click.Command):
    """``mcp --help`` ends with the tools the server registers (read from it, issue 28)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        try:
            from scarwarden.agents.mcp.catalogue import tool_summaries

            tools = tool_summaries()
        except ImportError:
            from scarwarden.cli.commands._install import install_hint

            with formatter.section("Tools"):
                formatter.write_text(f"listed once the SDK is installed: {install_hint('mcp')}")
            return
        with formatter.section(f"Tools ({len(tools)}, as the server lists them)"):
            formatter.write_dl(tools)


@click.command("mcp", cls=_McpCommand)
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
    Started on a terminal, it says so on stderr and how to connect a client, and ends
    on Ctrl-C or Ctrl-D. The tools are listed below (distill proposes only, unless
    --allow-distill-commit). Resources: scarwarden://playbook,
    scarwarden://rule/{id}, scarwarden://episode/{id}. Prompt: use_memory. Needs the
    SDK: pip install 'scarwarden[mcp]'. Registering it with each client: 'scarwarden
    export mcp-config' prints the entry; docs/mcp.md.

    \b
    Examples:
      scarwarden mcp                                  # serve the repo you are in
      scarwarden --repo ~/team-memory mcp
      scarwarden mcp --repo ~/team-memory --allow-distill-commit
      claude mcp add scarwarden -- scarwarden mcp --repo ~/team-memory
    """
    from scarwarden.errors import UsageError

    previous = stop_at_start()  # the console script did already (cli/door.py); CliRunner did not
    try:
        # Open the repo first, so a wrong path fails with a clear message and exit 2
        # instead of a server that dies on the first request.
        repo = open_repo(local_repo) if local_repo else get_repo(ctx)
        try:
            from scarwarden.agents.mcp.server import serve
        except ImportError as exc:
            from scarwarden.cli.commands._install import install_hint

            raise UsageError(f"the MCP SDK is not installed ({exc})", hint=install_hint("mcp")) from None
        if sys.stdin is not None and sys.stdin.isatty():  # None: closed, which serve() refuses
            _on_a_terminal(repo)
        serve(repo, allow_distill_commit=allow_distill_commit, environ=os.environ, sync=sync_writes)
    finally:
        for signum, handler in previous.items():
            if signal.getsignal(signum) is stopped_at_start:  # refused before serving
                signal.signal(signum, handler)


def _on_a_terminal(repo: MemoryRepo) -> None:
    """Started by hand (issue 28): say what this is and how to connect a client, on
    stderr (stdout is the protocol's). Ctrl-C ends it as it ends a client's server (exit
    130, a tool call running finished first); it ended the process at once, exit 0, even
    with a record_episode mid-way, from when the SDK read stdin in a worker thread that
    a KeyboardInterrupt could not stop (stdin is now waited on in the event loop)."""
    import shlex

    from scarwarden.agents.runtimes import scarwarden_command

    command = f"{shlex.quote(scarwarden_command())} mcp --repo {shlex.quote(str(repo.root))}"
    click.echo(
        f"scarwarden mcp: the memory in {repo.root} as an MCP server, speaking JSON-RPC on\n"
        "stdin/stdout. An MCP client starts it; to connect one, add the entry\n"
        "'scarwarden export mcp-config' prints to the client, or for Claude Code:\n"
        f"  claude mcp add scarwarden -- {command}\n"
        "Waiting for a client on this terminal; Ctrl-C or Ctrl-D ends it.",
        err=True,
    )
