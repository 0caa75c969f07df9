"""Helpers shared by the command modules: repo lookup, option values, JSON output, extras.

The text views of an episode and a rule are library code: :mod:`scarwarden.files.display`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import click

from scarwarden.characters import SURROGATE
from scarwarden.errors import UsageError
from scarwarden.repo import MemoryRepo, open_repo


def get_repo(ctx: click.Context, *, initialised: bool = True) -> MemoryRepo:
    """The memory repository the command runs in (``--repo`` or the cwd)."""
    root = ctx.find_root()
    path = (root.obj or {}).get("repo_path", ".")
    given = root.get_parameter_source("repo_path") not in (None, click.core.ParameterSource.DEFAULT)
    if given and not Path(path).is_dir():
        raise UsageError(
            f"{path}: no such folder (given with -C/--repo)",
            hint="-C/--repo takes the folder of a git repository",
        )
    try:
        return open_repo(path, initialised=initialised)
    except UsageError as exc:
        if given and "is not inside a git repository" in exc.message:
            # Issue 28: not "pass --repo PATH": the user did.
            raise UsageError(
                exc.message, hint=f"run 'git init {path}' first, or give -C/--repo a git repository"
            ) from None
        raise


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


def echo_json(data: Any) -> None:
    """Machine output: stable, sorted-as-given keys, UTF-8, one document. A lone
    surrogate (a path that is not UTF-8) is written as its JSON escape (``\\udce9``),
    as ``ensure_ascii`` would: written raw it was a byte that made the whole document
    invalid UTF-8."""
    import json  # only --json needs it; the hook imports this module on every commit

    text = json.dumps(data, indent=2, ensure_ascii=False)
    click.echo(SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


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


#: How far ahead of this clock an --at may be without --allow-future: clock skew.
FUTURE_SKEW_SECONDS = 300


def refuse_future(at: str | None, allowed: bool) -> None:
    """``--at`` beyond clock skew is refused unless ``--allow-future`` (issue 28; ``episode
    add`` and ``episode import``): an append-only ledger keeps a mistyped 2099 for good.
    An --at that does not read as a time is left to the episode's validation, which says
    why."""
    import datetime as dt

    if not at or allowed:
        return
    try:
        when = dt.datetime.fromisoformat(at.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    now = dt.datetime.now(dt.timezone.utc)
    try:
        when.astimezone(dt.timezone.utc)  # out of range: the validation says so
        ahead = (when - now).total_seconds()
    except OverflowError:
        return
    if ahead > FUTURE_SKEW_SECONDS:
        raise UsageError(
            f"--at {at} is in the future (now is {now:%Y-%m-%dT%H:%M:%SZ}); episodes record "
            "what happened, and the ledger is append-only",
            hint="check the date, or pass --allow-future if it is meant",
        )


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
