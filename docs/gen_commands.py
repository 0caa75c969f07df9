"""Generate docs/commands.md from the commands' own --help (run: python docs/gen_commands.py).

The reference is the help text, so the two cannot drift apart; a test checks that the
committed file is current.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scarwarden.cli.group import COMMANDS, main_group
from scarwarden.errors import ExitCode

OUT = Path(__file__).resolve().parent / "commands.md"

EXIT_CODE_TEXT = {
    ExitCode.OK: "success",
    ExitCode.CHECK_FAILED: "a check failed or you must act: invalid input, a gate rejection, "
    "invented citations with `--strict`, an export out of date with `--check`",
    ExitCode.USAGE: "usage or configuration error: bad option, an argument or stdin that is not UTF-8, "
    "not a git repository, no memory yet, a bad `scarwarden.yaml` or environment setting; a file or "
    "folder that cannot be read or written (permission denied, a folder, socket or FIFO where a "
    "file should be, a read-only or full disk: the message names the path)",
    ExitCode.MODEL_UNREACHABLE: "the model endpoint could not be reached (connection, timeout, "
    "retries on 408/429/5xx exhausted)",
    ExitCode.NO_MODEL: "a model is required and none is configured (no API key); "
    "a plain `answer` prints the rule-grounded brief instead and exits 0",
    ExitCode.MODEL_ERROR: "the model answered with an error (bad key, model not found) or with "
    "output that is not what was asked, even after one repair attempt",
    ExitCode.UNVERIFIABLE: "`verify` cannot prove the history: a shallow clone shows only part of it "
    "(the message gives the depth seen); fetch the whole history",
}


def _help(cmd: click.Command, path: list[str]) -> str:
    if cmd is main_group:
        with click.Context(
            main_group,
            info_name="scarwarden",
            terminal_width=100,
            max_content_width=100,
            **main_group.context_settings,
        ) as top:
            return main_group.get_help(top)
    ctx = click.Context(main_group, info_name="scarwarden", **main_group.context_settings)
    for name in path[:-1]:
        group = ctx.command
        assert isinstance(group, click.Group)
        sub = group.get_command(ctx, name)
        assert sub is not None
        ctx = click.Context(sub, info_name=name, parent=ctx)
    with click.Context(
        cmd, info_name=path[-1], parent=ctx, terminal_width=100, max_content_width=100
    ) as sub_ctx:
        return cmd.get_help(sub_ctx)


def generate() -> str:
    parts = [
        "# Command reference",
        "",
        "Generated from `--help` by `python docs/gen_commands.py`; do not edit by hand.",
        "Every command accepts the global option `--repo/-C PATH` (before the command name)",
        "to run as if started in PATH.",
        "",
        "Long work (`index --rebuild`, `check --all`, `verify`, `distill` with a model,",
        "`audit --html`) draws a progress bar on stderr when stderr is a terminal; never in",
        "a pipe, a log or CI, and never with `--json`.",
        "",
        "An error is printed on stderr as `error: ...`, the problems indented under it, then",
        "`hint: ...`; a line over 1,000 characters (a message quoting a huge argument) is cut,",
        "saying how long it was.",
        "",
        "## Exit codes",
        "",
        "| code | name | meaning |",
        "|---|---|---|",
    ]
    for code in ExitCode:
        parts.append(f"| {int(code)} | `{code.name}` | {EXIT_CODE_TEXT[code]} |")
    parts += [
        "",
        "Ctrl-C (SIGINT) ends a command with `Aborted!` on stderr and exit 1, click's way;",
        "a write it cut short is finished or undone by the next command (docs/scaling.md).",
        "`scarwarden mcp`, which a client may stop with SIGINT or SIGTERM (and its terminal,",
        "closing, with SIGHUP), finishes the tool call it is running and exits 130 on SIGINT,",
        "143 on SIGTERM, 129 on SIGHUP (128 + the signal, the shell's code for a process the",
        "signal ended; docs/mcp.md).",
    ]
    parts += ["", "## scarwarden", "", "```", _help(main_group, ["scarwarden"]), "```", ""]
    ctx = click.Context(main_group, info_name="scarwarden")
    for name in COMMANDS:
        cmd = main_group.get_command(ctx, name)
        if cmd is None:
            continue
        parts += [f"## scarwarden {name}", "", "```", _help(cmd, [name]), "```", ""]
        if isinstance(cmd, click.Group):
            for sub_name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, sub_name)
                if sub is None:
                    continue
                parts += [
                    f"### scarwarden {name} {sub_name}",
                    "",
                    "```",
                    _help(sub, [name, sub_name]),
                    "```",
                    "",
                ]
    return "\n".join(parts).rstrip("\n") + "\n"


if __name__ == "__main__":
    text = generate()
    if "--check" in sys.argv:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print("docs/commands.md is out of date: run python docs/gen_commands.py")
            sys.exit(1)
        sys.exit(0)
    OUT.write_text(text)
    print(f"wrote {OUT}")
