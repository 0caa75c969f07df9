"""The ``scarwarden`` command: a thin, lazily-loaded click group.

Each command lives in ``scarwarden/cli/commands/<name>.py`` and is imported only when
it is run, so ``scarwarden --help`` and the read commands start without paying for
YAML, requests, Flask or the MCP SDK. Expected failures (:class:`ScarwardenError`) are
turned into a message and an exit code here, at one boundary.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from scarwarden import __version__
from scarwarden.errors import ExitCode, ScarwardenError

if TYPE_CHECKING:
    import logging

#: command name -> "module:attribute", in the order ``--help`` lists them.
COMMANDS: dict[str, str] = {
    "init": "scarwarden.cli.commands.init:init",
    "demo": "scarwarden.cli.commands.demo:demo",
    "episode": "scarwarden.cli.commands.episode:episode",
    "rule": "scarwarden.cli.commands.rule:rule",
    "recall": "scarwarden.cli.commands.recall:recall",
    "ask": "scarwarden.cli.commands.ask:ask",
    "log": "scarwarden.cli.commands.log:log_cmd",
    "distill": "scarwarden.cli.commands.distill:distill",
    "answer": "scarwarden.cli.commands.answer:answer",
    "review-draft": "scarwarden.cli.commands.answer:review_draft",
    "audit-image": "scarwarden.cli.commands.audit_image:audit_image",
    "feedback": "scarwarden.cli.commands.answer:feedback",
    "check": "scarwarden.cli.commands.check:check",
    "verify": "scarwarden.cli.commands.verify:verify",
    "redact": "scarwarden.cli.commands.redact:redact",
    "hooks": "scarwarden.cli.commands.hooks:hooks",
    "merge-playbook": "scarwarden.cli.commands.merge_playbook:merge_playbook",
    "gate-hook": "scarwarden.cli.commands.gate_hook:gate_hook",
    "sync": "scarwarden.cli.commands.sync:sync",
    "diff": "scarwarden.cli.commands.diff:diff",
    "review": "scarwarden.cli.commands.review:review",
    "serve": "scarwarden.cli.commands.serve:serve",
    "audit": "scarwarden.cli.commands.audit:audit",
    "export": "scarwarden.cli.commands.export:export",
    "mcp": "scarwarden.cli.commands.mcp:mcp_cmd",
    "models": "scarwarden.cli.commands.models:models",
    "index": "scarwarden.cli.commands.index:index_cmd",
}


def _printable(message: str) -> str:
    """``message`` writable as UTF-8 whatever it quotes (a lone surrogate is escaped)."""
    return message.encode("utf-8", "backslashreplace").decode("utf-8")


def _argument_problem(args: list[str]) -> ScarwardenError | None:
    """The first argument that is not valid UTF-8, as a usage error (exit 2).

    Python hands each byte of an argument that is not UTF-8 over as a surrogate from
    U+DC80 to U+DCFF (surrogateescape), which no file, commit, index or terminal can
    take: refused here, before any command runs, rather than crash wherever the text
    is first written. (Other lone surrogates never come from a command line; called
    in-process, a command's own input checks refuse them.)"""
    for number, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
            continue
        except UnicodeEncodeError:
            pass
        at = next((i for i, char in enumerate(arg) if "\udc80" <= char <= "\udcff"), None)
        if at is None:
            continue
        from scarwarden.errors import UsageError

        shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return UsageError(
            f"argument {number} ('{shown}') is not valid UTF-8 (the byte 0x{ord(arg[at]) - 0xDC00:02X} "
            f"at character {at + 1}); nothing was done",
            hint="Scarwarden reads its command line as UTF-8 text (file names too): "
            "check the terminal's encoding (locale), or rename the file",
        )
    return None


class _Refused(click.ClickException):
    """A usage error found while the command line is parsed, before the command's own
    error boundary (:meth:`LazyGroup.invoke`): printed the same way, exit 2."""

    exit_code = int(ExitCode.USAGE)

    def __init__(self, error: ScarwardenError) -> None:
        super().__init__(error.message)
        self.error = error

    def show(self, file: Any = None) -> None:
        click.echo(_printable(self.error.render()), err=True)


def _setup_logging() -> None:
    """Warnings on stderr as ``scarwarden: <message>``, set up when the first one is
    logged (:mod:`scarwarden.logs`): a run that warns of nothing never imports logging."""
    from scarwarden.logs import when_used

    when_used(_stderr_handler)


def _stderr_handler(logger: logging.Logger) -> None:
    import logging

    class StderrHandler(logging.Handler):
        scarwarden_cli = True

        def emit(self, record: logging.LogRecord) -> None:
            click.echo(f"scarwarden: {record.getMessage()}", err=True)

    if not any(getattr(h, "scarwarden_cli", False) for h in logger.handlers):
        logger.addHandler(StderrHandler())
    logger.setLevel(logging.INFO)
    # Propagation stays on: the root logger has no handler in the CLI (so nothing is
    # printed twice) and test harnesses that listen on the root still see the records.


def _no_identity(exc: ScarwardenError) -> ScarwardenError | None:
    """Git's "Author identity unknown" as one sentence and the two commands that fix it
    (issue 28: a new machine's first 'init' showed git's raw twelve lines). Nothing was
    committed: every write lands in one commit or not at all."""
    if "Author identity unknown" not in exc.message and "Please tell me who you are" not in exc.message:
        return None
    from scarwarden.errors import UsageError

    return UsageError(
        "git does not know who is committing: user.name and user.email are not set; nothing was committed",
        hint='set them once: git config --global user.name "Your Name" && '
        'git config --global user.email "you@example.com" (without --global: this repository only)',
    )


class LazyGroup(click.Group):
    """Imports a command's module only when that command is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        module = importlib.import_module(module_name)
        command = getattr(module, attr)
        assert isinstance(command, click.Command)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # The group parses the whole command line first: one check covers every command.
        problem = _argument_problem(args)
        if problem is not None:
            raise _Refused(problem)
        return super().parse_args(ctx, args)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            # click suggests from self.commands, which a lazy group leaves empty:
            # `scarwarden recal` should still hear "Did you mean 'recall'?" (issue 18).
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=list(COMMANDS), ctx=ctx
            ) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help comes from a static table so --help imports no command module.
        from scarwarden.cli.commands import SHORT_HELP

        rows = [(name, SHORT_HELP.get(name, "")) for name in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        debug = bool(ctx.params.get("debug")) or os.environ.get("SCARWARDEN_DEBUG", "") not in ("", "0")
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # `scarwarden episode list | head`
            sys.stderr.close()
            ctx.exit(0)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise  # click's own: usage errors and exits, printed by click
        except Exception as exc:  # noqa: BLE001 - the one boundary: no input prints a traceback
            error = exc if isinstance(exc, ScarwardenError) else _expected(exc, ctx)
            if error is None:
                if debug:
                    raise
                click.echo(
                    _printable(f"error: internal error: {type(exc).__name__}: {exc}")
                    + "\nhint: this is a bug in Scarwarden, not in your input; run again with --debug "
                    "(or SCARWARDEN_DEBUG=1) for the traceback, and report it",
                    err=True,
                )
                ctx.exit(int(ExitCode.CHECK_FAILED))
            if debug:
                import traceback  # ~5 ms: only on this path

                traceback.print_exc()
            error = _no_identity(error) or error
            click.echo(_printable(error.render()), err=True)
            ctx.exit(int(error.exit_code))


def _expected(exc: Exception, ctx: click.Context) -> ScarwardenError | None:
    """An exception from outside our code that is still the user's to fix, as our error:
    a file or folder that cannot be read or written (the path and what is wrong, exit
    2), an index SQLite cannot open. ``None``: a bug, reported as one."""
    from scarwarden.errors import FileAccessError, file_access_error

    if isinstance(exc, OSError):
        return file_access_error(exc, root=str((ctx.obj or {}).get("repo_path", ".")))
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.OperationalError) and str(exc) in _SQLITE_ACCESS:
        return FileAccessError(
            f"cannot use the index (.scarwarden/index.db): SQLite says {exc}",
            hint="check that .scarwarden/ and the files in it can be read and written; the index is "
            "a cache of the memory files: delete .scarwarden/index.db and it is rebuilt from them",
        )
    return None


#: What SQLite says when the index's file or folder cannot be used (not a bug of ours).
_SQLITE_ACCESS = frozenset(
    {
        "unable to open database file",
        "attempt to write a readonly database",
        "disk I/O error",
        "database or disk is full",
    }
)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  scarwarden demo                       # the whole loop on the bundled demo memory
  scarwarden init                       # make this git repo a memory repo
  scarwarden episode add --task "Draft the launch post" --correction "Lead with the pain"
  scarwarden recall "Draft a LinkedIn post announcing our beta"

Help on a command: scarwarden COMMAND --help. The documentation (every command,
the file formats, exit codes): https://github.com/scarwarden/scarwarden/tree/main/docs
(docs/commands.md, docs/formats.md in a clone).""",
)
@click.version_option(__version__, prog_name="scarwarden")
@click.option(
    "--repo",
    "-C",
    "repo_path",
    default=".",
    metavar="PATH",
    type=click.Path(file_okay=False),
    help="Run as if started in PATH (a git repository).",
)
@click.option(
    "--debug",
    is_flag=True,
    help="On an error, print the full Python traceback too (also SCARWARDEN_DEBUG=1).",
)
@click.pass_context
def main_group(ctx: click.Context, repo_path: str, debug: bool) -> None:
    """Scarwarden: auditable, git-native memory for AI agents.

    No provenance, no rule: every rule cites the episodes that taught it, and code
    checks that the citations resolve.
    """
    _setup_logging()
    ctx.obj = {"repo_path": repo_path}


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        main_group.main(args=argv, prog_name="scarwarden")
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)


# click.UsageError exits 2 already, matching ExitCode.USAGE.
assert int(ExitCode.USAGE) == 2
