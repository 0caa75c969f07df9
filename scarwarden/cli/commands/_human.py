"""Taking a human's answer on the command line, for ``ask`` and ``answer`` alike.

Recording it is the library's job (:func:`scarwarden.asking.record_human_answer`);
this is only how the answer gets in: ``--answer TEXT``, ``--answer -`` (stdin), or a
prompt on a terminal. Without a terminal and without ``--answer`` the command exits 1
and says how to pass the answer, instead of waiting on a pipe forever.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from scarwarden.cli.commands._input import read_stdin
from scarwarden.errors import ExitCode, ScarwardenError, UsageError
from scarwarden.repo import MemoryRepo


def answer_option(answer: str | None, *, task_from_stdin: bool = False) -> str | None:
    """``--answer`` as given: ``-`` reads stdin (a byte order mark at its start is not
    text: dropped); a blank answer, or ``-`` when the task reads stdin too
    (``task_from_stdin``), is a usage error (2)."""
    if answer == "-" and task_from_stdin:
        raise UsageError(
            "the task and --answer both read stdin ('-'), and there is one stdin",
            hint="give the task or the answer in words on the command line; the other may be '-'",
        )
    if answer == "-":
        answer = read_stdin("--answer").removeprefix("\ufeff")
    if answer is not None and not answer.strip():
        raise UsageError(
            "--answer is empty: nothing to record",
            hint="give the human's answer as text, or leave --answer out to be prompted on a terminal",
        )
    return answer


def prompt_human(
    command: str, task: str, prompt: str, *, show: str | None = None, repo: MemoryRepo | None = None
) -> str:
    """Ask on the terminal, after showing ``show`` (why the human is asked) on stderr;
    without a terminal, fail (exit 1) saying how to pass ``--answer``. An answer
    ``repo``'s ledger would refuse is asked for again (:func:`_typed`)."""
    if not sys.stdin.isatty():
        raise ScarwardenError(
            "memory has nothing on this task and there is no terminal to ask on",
            hint=f'pass the human\'s answer: scarwarden {command} {_shell_word(task)} --answer "..."',
            exit_code=ExitCode.CHECK_FAILED,
        )
    if show:
        click.echo(show, err=True)
    return str(click.prompt(prompt, err=True, value_proc=lambda value: _typed(value, repo)))


@contextmanager
def kept_if_lost(command: str, task: str, answer: str, *, typed: bool = True) -> Iterator[None]:
    """Recording ``answer``, ``typed`` at the prompt: when that fails (no git identity, a
    failing hook, a full disk), the answer is printed back on stderr with the command
    that records it once the error is fixed: the human's answer is not lost with it."""
    try:
        yield
    except ScarwardenError:
        if not typed:
            raise  # given on the command line: the human still has it
        import shlex

        click.echo(
            "The answer typed was not recorded; once the error below is fixed, record it:\n"
            f"  scarwarden {command} {_shell_word(task)} --answer {shlex.quote(answer)}",
            err=True,
        )
        raise


def _shell_word(text: str) -> str:
    """``text`` as one shell word that the shell passes on as it is: in double quotes
    when nothing in it is special there, else quoted by :func:`shlex.quote` (a ``"``
    ended the word, a ``$`` or a backquote ran inside it: another task was recorded)."""
    if not set(text) & set('"$`\\!'):
        return f'"{text}"'
    import shlex

    return shlex.quote(text)


def _typed(value: str, repo: MemoryRepo | None) -> str:
    """A typed answer; one that cannot be recorded raises click's UsageError, which
    makes the prompt say why and ask again (the human's answer is not lost with the
    command): a blank one, one holding a control character, mostly an arrow key's
    escape sequence (the prompt, on stderr, does not edit the line), or one ``repo``'s
    ledger refuses (a credential, personal data ``privacy:`` refuses)."""
    from scarwarden.answers.asking import answer_refusal
    from scarwarden.files.input_policy import text_problem

    answer = value.strip()
    if not answer:
        raise click.UsageError("the answer is empty: type the human's answer")
    problem = text_problem(answer)
    if problem is not None:
        raise click.UsageError(
            f"the answer {problem} (arrow keys do not move the cursor here): type it again"
        )
    refused = None if repo is None else answer_refusal(repo, answer)
    if refused is not None:
        raise click.UsageError(
            f"the answer {refused}: type it again without it (a placeholder such as [email], "
            "[card] or [redacted] in its place)"
        )
    return answer
