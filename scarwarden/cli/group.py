"""The ``scarwarden`` command: a thin, lazily-loaded click group.

Each command lives in ``scarwarden/cli/commands/<name>.py`` and is imported only when
it is run, so ``scarwarden --help`` and the read commands start without paying for
YAML, requests, Flask or the MCP SDK. Expected failures (:class:`ScarwardenError`) are
turned into a message and an exit code here, at one boundary.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import click

from scarwarden import __version__
from scarwarden.cli.boundary import argument_problem, debug_asked, printable, report_error, setup_logging
from scarwarden.errors import ExitCode, ScarwardenError

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


class _Refused(click.ClickException):
    """A usage error found while the command line is parsed, before the command's own
    error boundary (:meth:`LazyGroup.invoke`): printed the same way, exit 2."""

    exit_code = int(ExitCode.USAGE)

    def __init__(self, error: ScarwardenError) -> None:
        super().__init__(error.message)
        self.error = error

    def show(self, file: Any = None) -> None:
        click.echo(printable(self.error.render()), err=True)


def _nul_problem(args: list[str]) -> ScarwardenError | None:
    """The first argument holding a NUL, as a usage error (exit 2), once the file system
    refused it as a path (``ValueError: embedded null byte``; from Python 3.13,
    ``embedded null character in path``), which printed "internal error". A real command
    line cannot carry one, but an in-process caller's can (``main([...])``); a NUL in
    text (a task, an episode's field) is refused where the text is checked, naming the
    field, as every other door does."""
    for number, arg in enumerate(args, 1):
        if "\x00" in arg:
            from scarwarden.errors import UsageError
            from scarwarden.files.input_policy import shown

            return UsageError(
                f"argument {number} ({shown(arg)}) holds a NUL character (U+0000) at character "
                f"{arg.index(chr(0)) + 1}; no option, file name or text can; nothing was done",
                hint="remove it",
            )
    return None


#: What a terminal would act on rather than show: control characters, a line break.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f]")

#: Where the group keeps the command line it parsed, for :func:`_cut`.
_ARGS = "scarwarden.args"


def _cut(error: click.UsageError, args: list[str]) -> click.UsageError:
    """click's usage error with each long argument it quotes shown by its start and its
    length, as our own errors quote one, one with a control character escaped, and every
    line cut at ``LINE_LIMIT``: click quoted a 60,000-character choice, number, option
    name or path whole, and printed extra arguments raw. Both places a
    usage error leaves the group (parsing, then the command) come through here."""
    from scarwarden.errors import clipped
    from scarwarden.files.input_policy import named, quoted

    message = error.format_message()
    values = set(args) | {arg.partition("=")[2] for arg in args if arg.startswith("--")}
    values |= {arg[2:] for arg in args if arg[:1] == "-" and arg[1:2] != "-"}  # -nVALUE
    for value in sorted((v for v in values if len(v) > 64 or _UNSAFE.search(v)), key=len, reverse=True):
        # click quotes most values with repr(); "extra arguments" it prints raw.
        raw = named(value) if len(value) > 64 else repr(value)
        message = message.replace(repr(value), quoted(value)).replace(value, raw)
    message += _misplaced(error)
    message = "\n".join(clipped(line) for line in message.split("\n"))
    if message == error.format_message():
        return error
    return click.UsageError(message, error.ctx)


#: The group's own options, which a command does not take after its name.
_GROUP_OPTIONS = {"-C": " PATH", "--repo": " PATH", "--debug": ""}


def _misplaced(error: click.UsageError) -> str:
    """For ``recall x -C path``: where the group's option goes (click said only "No such
    option '-C'", which reads as if scarwarden had none)."""
    name = getattr(error, "option_name", None)
    ctx = error.ctx
    if not isinstance(error, click.NoSuchOption) or name not in _GROUP_OPTIONS or ctx is None:
        return ""
    command = ctx.command_path.partition(" ")[2]
    return (
        f" {name} is scarwarden's own option: it goes before the command "
        f"(scarwarden {name}{_GROUP_OPTIONS[name]} {command} ...)."
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
        problem = argument_problem(args)
        if problem is not None:
            raise _Refused(problem)
        given = ctx.meta[_ARGS] = list(args)  # click's parser empties `args` as it goes
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise _cut(exc, given) from None
        except ValueError as exc:  # click.Path's os.stat: -C 'a<NUL>b'
            nul = _nul_problem(given) if "embedded null" in str(exc) else None
            if nul is None:
                raise
            raise _Refused(nul) from None

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
        debug = debug_asked(bool(ctx.params.get("debug")))
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # `scarwarden episode list | head`
            sys.stderr.close()
            ctx.exit(0)
        except click.UsageError as exc:
            raise _cut(exc, ctx.meta.get(_ARGS, [])) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise  # click's own: usage errors and exits, printed by click
        except Exception as exc:  # noqa: BLE001 - the one boundary: no input prints a traceback
            nul = _nul_problem(ctx.meta.get(_ARGS, [])) if "embedded null" in str(exc) else None
            if nul is not None:  # a path the file system refused; text is checked where it is read
                raise _Refused(nul) from None
            ctx.exit(report_error(exc, debug=debug, repo_path=str((ctx.obj or {}).get("repo_path", "."))))


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
    setup_logging()
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
