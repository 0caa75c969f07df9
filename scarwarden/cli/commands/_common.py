"""Helpers shared by the command modules: repo lookup, option values, JSON output, extras.

The text views of an episode and a rule are library code: :mod:`scarwarden.files.display`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from scarwarden.cli.boundary import open_repo_at
from scarwarden.cli.commands._input import CLOSED_HINT
from scarwarden.cli.output import json_text
from scarwarden.errors import UsageError
from scarwarden.files.episode_fields import MAX_TAG_CHARS, tag_problem
from scarwarden.repo import MemoryRepo


def get_repo(ctx: click.Context, *, initialised: bool = True) -> MemoryRepo:
    """The memory repository the command runs in (``--repo`` or the cwd)."""
    root = ctx.find_root()
    path = (root.obj or {}).get("repo_path", ".")
    given = root.get_parameter_source("repo_path") not in (None, click.core.ParameterSource.DEFAULT)
    return open_repo_at(path, given=given, initialised=initialised)


def limit_option(help: str, *, default: int | None = None) -> Callable[[Any], Any]:
    """``--limit/-n N``, spelt and bounded the same on every command: a whole number of at
    least 1 (0 or less: exit 2); one past every item (even past 2^63) means all of them."""
    return click.option(
        "--limit",
        "-n",
        "limit",
        type=click.IntRange(min=1),
        default=default,
        show_default=default is not None,
        metavar="N",
        help=help,
    )


_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: The same, but for the line breaks and tabs of a text of many lines (a model's answer).
_CONTROLS_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(value: str, *, lines: bool = False) -> str:
    """``value`` safe to print on a terminal: control characters (ESC, BEL, NUL, CR, ...)
    shown as ``\\x1b``-style escapes, so text from a log, another clone or a model cannot
    move the cursor, retitle the window or hide what follows (``lines``: newlines and
    tabs kept)."""
    if lines:
        value = value.replace("\r\n", "\n")  # CRLF line ends are line ends, not escapes
    pattern = _CONTROLS_BUT_LINES if lines else _CONTROLS
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def split_list(values: Iterable[str]) -> list[str]:
    """Repeatable, comma-separated option values as one list: ``--tag a,b --tag c``."""
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


#: Most distinct tags one command's ``--tag`` gives a rule or an episode: a few labels for
#: recall to match (the distiller gives at most 6), not a word list (40,000 took rule add
#: 29 s and put 300 KB of tags into the playbook).
MAX_TAGS = 32


def tag_list(values: Iterable[str]) -> list[str]:
    """``--tag`` values as one list (:func:`split_list`); a value that names no tag
    (``--tag ""``, ``--tag ,``: an unset shell variable) is a usage error, not a silent
    "no tag", and so is a tag over :data:`MAX_TAG_CHARS` characters or a list of more
    than :data:`MAX_TAGS` tags."""
    values = list(values)
    for value in values:
        if not any(item.strip() for item in value.split(",")):
            raise UsageError(
                f"--tag {value!r} names no tag: nothing was written",
                hint="give the tag (repeatable or comma-separated), or leave --tag out",
            )
    tags = split_list(values)
    for tag in tags:
        # A bound, refused as rule add's --text is (exit 2); the form is the validator's.
        problem = tag_problem(tag) if len(tag) > MAX_TAG_CHARS else None
        if problem is not None:
            raise UsageError(f"--tag: {problem[0]}: nothing was written", hint=problem[1])
    if (count := len({tag.lower() for tag in tags})) > MAX_TAGS:
        raise UsageError(
            f"--tag: {count:,} tags; the limit is {MAX_TAGS}: nothing was written",
            hint="give the few labels recall should match; the text says the rest",
        )
    return tags


#: ``--tag`` of the commands that write tags (read with :func:`tag_list`).
tag_option = click.option(
    "--tag",
    "tags",
    multiple=True,
    help=f"A tag, at most {MAX_TAG_CHARS} characters (repeatable or comma-separated, at most "
    f'{MAX_TAGS} tags; one that names no tag, such as "", a longer one or a {MAX_TAGS + 1}rd tag: '
    "exit 2).",
)


def echo_json(data: Any) -> None:
    """Print ``data`` as the one JSON form of every ``--json`` (:func:`json_text`)."""
    click.echo(json_text(data))


class OutputPath(click.Path):
    """A file to write (``--output``): ``click.Path(dir_okay=False)``, and a path ending
    in ``/`` refused as a folder, existing or not (``-o docs/`` wrote a file named
    ``docs``)."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.endswith("/"):
            self.fail(f"{value!r} ends with '/', a folder: give the path of the file to write", param, ctx)
        return super().convert(value, param, ctx)


class InputFile(click.File):
    """``click.File("rb")`` whose ``-`` with stdin closed is a usage error (click's own
    stdin lookup raises ``RuntimeError`` then: an "internal error")."""

    def __init__(self) -> None:
        super().__init__("rb")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "-" and sys.stdin is None:
            self.fail(f"stdin is closed; {CLOSED_HINT}", param, ctx)
        return super().convert(value, param, ctx)


def refuse_future(at: str | None, allowed: bool) -> None:
    """``--at`` beyond clock skew is refused unless ``--allow-future`` (issue 28; ``episode
    add`` and ``episode import``): an append-only ledger keeps a mistyped 2099 for good.
    An --at that does not read as a time is left to the episode's validation, which says
    why."""
    from scarwarden.times import future_problem

    problem = None if not at or allowed else future_problem(at, "--at", "--allow-future")
    if problem is not None:
        raise problem


def require_ui(what: str) -> None:
    """Raise a clear usage error (exit 2) when Flask/Jinja are not installed."""
    try:
        import flask  # noqa: F401
        import jinja2  # noqa: F401
    except ImportError:
        from scarwarden.cli.commands._install import install_hint

        raise UsageError(f"{what} needs Flask, which is not installed", hint=install_hint("ui")) from None


def print_problems(problems: Sequence[object], summary: str) -> None:
    """One problem per item (hint indented under it), then the summary line."""
    from scarwarden.gate.report import problem_lines

    for line in problem_lines(problems, summary):
        click.echo(line)


@contextmanager
def verdict_output(ok: bool) -> Iterator[None]:
    """Printing a gate's verdict (``check``, ``verify``, ``review``): a reader that closed
    the pipe (``check --all | head -c1``) leaves a failure a failure. A passing verdict's
    closed pipe exits 0, as any listing's; a failing one goes on to its exit code, its
    output sent nowhere (the interpreter's last flush of stdout would fail again)."""
    try:
        yield
    except BrokenPipeError:
        if ok:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def print_verdict(ctx: click.Context, report: Any, *, as_json: bool) -> None:
    """A gate's ``report`` (``check``, ``verify``): its JSON, or its warnings on stderr
    and its problems; exit 1 when it failed, whether or not the reader stayed
    (:func:`verdict_output`)."""
    from scarwarden.errors import ExitCode

    with verdict_output(report.ok):
        if as_json:
            echo_json(report.to_json())
        else:
            for warning in report.warnings:
                click.echo(f"warning: {warning}", err=True)
            print_problems(report.problems, report.summary())
    if not report.ok:
        ctx.exit(int(ExitCode.CHECK_FAILED))
