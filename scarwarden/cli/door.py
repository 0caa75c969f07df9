"""The ``scarwarden`` console script: a recall without click, every other command through it.

A cold ``scarwarden recall`` is what an agent pays on every task, and click is a fifth of
that process's instructions (``inspect``, ``uuid``, ``gettext``...: issue 30 asks a cold
recall within 6x ``python -c pass``). So the entry point reads a recall's command line
itself when it is one of the plain shapes below, and hands anything else (``--help``,
``--version``, an unknown or repeated option, a bad value, a missing task, a word that is
not UTF-8, a shell-completion request...) to the click group, which says what click
always said. Both run the same code after parsing (:func:`recall_command`), print through
the same boundary (:mod:`scarwarden.cli.boundary`) and the same text
(:mod:`scarwarden.cli.commands._recall_text`); tests/cli/test_door.py runs each shape
both ways and compares stdout, stderr and the exit code.

    [-C PATH | -CPATH | --repo PATH | --repo=PATH] [--debug] recall OPTIONS... TASK...

where OPTIONS are ``--json``, ``--explain``, ``--no-log``, ``--limit N``, ``--limit=N``,
``-n N``, ``-nN`` (N a whole number of at least 1), each at most once, before, between or
after the TASK words; a TASK word is any argument not starting with ``-``, or ``-``
itself (a single ``-`` reads the task from stdin).
"""

from __future__ import annotations

import os
import sys

# Nothing of Scarwarden's is imported here: ``scarwarden mcp`` installs its stop
# signals' handler first (:func:`main`), ~20 ms sooner than after the error boundary.

_FLAGS = {"--json": "as_json", "--explain": "explain", "--no-log": "no_log"}


class RecallArgs:
    """A recall's command line, parsed: what the click command's parameters would be."""

    __slots__ = ("repo_path", "given", "debug", "task", "flags", "limit")

    def __init__(
        self,
        repo_path: str,
        given: bool,
        debug: bool,
        task: tuple[str, ...],
        flags: set[str],
        limit: int | None,
    ) -> None:
        self.repo_path = repo_path
        self.given = given  # -C/--repo was on the command line
        self.debug = debug
        self.task = task
        self.flags = flags  # of "as_json", "explain", "no_log", "limit"
        self.limit = limit


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``scarwarden``, ``python -m scarwarden``)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if _command_word(args) == "mcp":  # a stop signal from here on exits 128 + it (docs/mcp.md)
        from scarwarden.agents.mcp.interrupt import stop_at_start

        stop_at_start()
    parsed = parse_recall(args)
    if parsed is None:
        from scarwarden.cli.group import main as click_main

        click_main(argv)
        return
    try:
        code = recall_command(parsed)
    except KeyboardInterrupt:  # as click's main: a blank line closes the ^C echo
        from scarwarden.cli.output import echo

        echo(err=True)
        echo("Aborted!", err=True)
        code = 1
    sys.exit(code)


def parse_recall(args: list[str]) -> RecallArgs | None:
    """``args`` as a recall, or None for click to parse (anything but the plain shapes)."""
    if os.name != "posix" or any(k.endswith("_COMPLETE") and k.startswith("_") for k in os.environ):
        return None  # click expands wildcards on Windows, and answers shell completion
    from scarwarden.cli.boundary import argument_problem

    if argument_problem(args) is not None:
        return None
    from scarwarden.cli.output import utf8_streams

    if not utf8_streams():
        return None  # click re-wraps an ASCII stream; let it
    group: dict[str, str | bool] = {}
    rest = list(args)
    while rest and rest[0] != "recall":
        if not _group_option(rest, group):
            return None
    if not rest:
        return None
    command = _recall_options(rest[1:])
    if command is None:
        return None
    path = group.get("repo_path", ".")
    assert isinstance(path, str)
    if "repo_path" in group and not _plain_folder(path):
        return None  # click.Path says what is wrong with it
    task, flags, limit = command
    return RecallArgs(path, "repo_path" in group, bool(group.get("debug")), task, flags, limit)


def _group_option(rest: list[str], group: dict[str, str | bool]) -> bool:
    """Take one of the group's options off ``rest`` into ``group``; False if it is not one
    (or is given twice, or its value is missing or looks like an option)."""
    arg = rest.pop(0)
    if arg == "--debug" and "debug" not in group:
        group["debug"] = True
        return True
    if "repo_path" in group:
        return False
    if arg in ("-C", "--repo"):
        if not rest or rest[0].startswith("-"):
            return False
        group["repo_path"] = rest.pop(0)
        return True
    if arg.startswith("--repo="):
        group["repo_path"] = arg[len("--repo=") :]
    elif arg.startswith("-C") and len(arg) > 2:
        group["repo_path"] = arg[2:]  # click's attached short value: -Cpath
    else:
        return False
    return True


def _command_word(args: list[str]) -> str | None:
    """The command ``args`` name, after the group's options (None: not plain ones)."""
    rest: list[str] = list(args)
    group: dict[str, str | bool] = {}
    while rest and rest[0].startswith("-"):
        if not _group_option(rest, group):
            return None
    return rest[0] if rest else None


def _recall_options(rest: list[str]) -> tuple[tuple[str, ...], set[str], int | None] | None:
    """``recall``'s own arguments: its TASK words, the flags given and ``--limit``."""
    task: list[str] = []
    flags: set[str] = set()
    limit: int | None = None
    while rest:
        arg = rest.pop(0)
        if arg == "-" or not arg.startswith("-"):
            task.append(arg)
            continue
        if arg in _FLAGS and _FLAGS[arg] not in flags:
            flags.add(_FLAGS[arg])
            continue
        value = _limit_value(arg, rest)
        if value is None or "limit" in flags:
            return None
        flags.add("limit")
        limit = value
    if not task:
        return None
    return tuple(task), flags, limit


def _limit_value(arg: str, rest: list[str]) -> int | None:
    """``--limit N``, ``--limit=N``, ``-n N`` or ``-nN``'s N when it is a plain whole
    number of at least 1 (``rest`` loses the separate value); None otherwise."""
    if arg in ("--limit", "-n"):
        if not rest:
            return None
        text = rest.pop(0)
    elif arg.startswith("--limit="):
        text = arg[len("--limit=") :]
    elif arg.startswith("-n") and not arg.startswith("--"):
        text = arg[2:]
    else:
        return None
    # Past 4,300 digits int() raises (CPython's limit, CVE-2020-10735): click says what is wrong.
    if not (text.isascii() and text.isdigit()) or len(text) > 4_000 or int(text) < 1:
        return None
    return int(text)


def _plain_folder(path: str) -> bool:
    """Whether click's ``Path(file_okay=False)`` takes ``path`` without a word: a path
    that does not exist (the command says so), or a folder that can be read."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return path != ""
    import stat

    return stat.S_ISDIR(st.st_mode) and os.access(path, os.R_OK)


def recall_command(parsed: RecallArgs) -> int:
    """Run the recall ``parsed`` asks for, as the click command does; its exit code."""
    from scarwarden.cli.boundary import debug_asked, open_repo_at, report_error, setup_logging
    from scarwarden.cli.commands._recall_text import print_recall

    setup_logging()
    debug = debug_asked(parsed.debug)
    flags = parsed.flags
    try:
        repo = open_repo_at(parsed.repo_path, given=parsed.given)
        print_recall(
            repo,
            parsed.task,
            as_json="as_json" in flags,
            limit=parsed.limit,
            explain="explain" in flags,
            no_log="no_log" in flags,
        )
    except BrokenPipeError:  # `scarwarden recall ... | head`
        sys.stderr.close()
        return 0
    except Exception as exc:  # noqa: BLE001 - the one boundary: no input prints a traceback
        return report_error(exc, debug=debug, repo_path=parsed.repo_path)
    return 0
