"""Expected failures and the exit codes they map to.

Every failure a user can cause or fix is a :class:`ScarwardenError`; the CLI turns it
into a message on stderr and an exit code at one boundary (``cli.py``), the way
pre-commit's ``FatalError`` works. Nothing else in the package prints or exits.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ExitCode(enum.IntEnum):
    """The exit codes of every ``scarwarden`` command (documented in docs/commands.md)."""

    OK = 0
    #: A check failed or the user must act: validation errors, a rejected commit,
    #: invented citations under ``--strict``, an ``export --check`` that found drift.
    CHECK_FAILED = 1
    #: Bad usage or configuration: unknown option, not a git repo, bad scarwarden.yaml.
    USAGE = 2
    #: The model endpoint could not be reached (connection refused, DNS, timeout,
    #: retries on 408/429/5xx exhausted).
    MODEL_UNREACHABLE = 3
    #: A model is required and none is configured (no API key).
    NO_MODEL = 4
    #: The model answered, but with an error (bad key, model not found) or with output
    #: that is not what was asked for, even after one repair attempt.
    MODEL_ERROR = 5
    #: ``verify`` cannot prove the history: a shallow clone hides part of it.
    UNVERIFIABLE = 6


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, located as precisely as we can."""

    message: str
    file: str | None = None
    line: int | None = None
    field: str | None = None
    hint: str | None = None

    def location(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file if self.line is None else f"{self.file}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts)

    def __str__(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "field": self.field,
            "message": self.message,
            "hint": self.hint,
        }


class ScarwardenError(Exception):
    """Base class of every expected failure."""

    exit_code: ExitCode = ExitCode.CHECK_FAILED

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        exit_code: ExitCode | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.problems = list(problems or [])
        if exit_code is not None:
            self.exit_code = exit_code

    def render(self) -> str:
        lines = [f"error: {self.message}"]
        for problem in self.problems:
            lines.extend("  " + line for line in str(problem).splitlines())
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class ValidationError(ScarwardenError):
    """Input (an episode, a playbook, a setting) is not valid; ``problems`` says where."""

    exit_code = ExitCode.CHECK_FAILED


class UsageError(ScarwardenError):
    """The command was used wrongly or the repository is not set up for it."""

    exit_code = ExitCode.USAGE


class ConfigError(ScarwardenError):
    """``scarwarden.yaml`` or an environment variable holds a bad value."""

    exit_code = ExitCode.USAGE


class GitError(ScarwardenError):
    """A git command failed in a way the user has to look at."""

    exit_code = ExitCode.CHECK_FAILED


class ModelUnreachable(ScarwardenError):
    """The model endpoint did not answer (network, timeout, retries exhausted)."""

    exit_code = ExitCode.MODEL_UNREACHABLE


class NoModelConfigured(ScarwardenError):
    """A model is required and no API key is configured."""

    exit_code = ExitCode.NO_MODEL


class ModelError(ScarwardenError):
    """The model answered with an error or with output that is not what was asked."""

    exit_code = ExitCode.MODEL_ERROR
