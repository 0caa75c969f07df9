"""Taking a human's answer on the command line, for ``ask`` and ``answer`` alike.

Recording it is the library's job (:func:`scarwarden.asking.record_human_answer`);
this is only how the answer gets in: ``--answer TEXT``, ``--answer -`` (stdin), or a
prompt on a terminal. Without a terminal and without ``--answer`` the command exits 1
and says how to pass the answer, instead of waiting on a pipe forever.
"""

from __future__ import annotations

import sys

import click

from scarwarden.cli.commands._input import read_stdin
from scarwarden.errors import ExitCode, ScarwardenError, UsageError


def answer_option(answer: str | None) -> str | None:
    """``--answer`` as given: ``-`` reads stdin; a blank answer is a usage error (2)."""
    if answer == "-":
        answer = read_stdin("--answer")
    if answer is not None and not answer.strip():
        raise UsageError(
            "--answer is empty: nothing to record",
            hint="give the human's answer as text, or leave --answer out to be prompted on a terminal",
        )
    return answer


def prompt_human(command: str, task: str, prompt: str, *, show: str | None = None) -> str:
    """Ask on the terminal, after showing ``show`` (why the human is asked) on stderr;
    without a terminal, fail (exit 1) saying how to pass ``--answer``."""
    if not sys.stdin.isatty():
        raise ScarwardenError(
            "memory has nothing on this task and there is no terminal to ask on",
            hint=f'pass the human\'s answer: scarwarden {command} "{task}" --answer "..."',
            exit_code=ExitCode.CHECK_FAILED,
        )
    if show:
        click.echo(show, err=True)
    return str(click.prompt(prompt, err=True)).strip()
