"""Expected failures and the exit codes they map to.

Every failure a user can cause or fix is a :class:`ScarwardenError`; the CLI turns it
into a message on stderr and an exit code at one boundary (``cli.py``), the way
pre-commit's ``FatalError`` works. Nothing else in the package prints or exits.
"""

from __future__ import annotations

import enum
import errno
import os

from scarwarden.records import record


class ExitCode(enum.IntEnum):
    """The exit codes of every ``scarwarden`` command (documented in docs/commands.md)."""

    OK = 0
    #: A check failed or the user must act: validation errors, a rejected commit,
    #: invented citations under ``--strict``, an ``export --check`` that found drift.
    CHECK_FAILED = 1
    #: Bad usage or configuration: unknown option, an argument that is not UTF-8, not a
    #: git repo, bad scarwarden.yaml; a file or folder that cannot be read or written.
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


@record(frozen=True)
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
        """The error as the CLI and the hooks print it; a line over :data:`LINE_LIMIT`
        characters (a message quoting a 60,000-character argument whole) is cut, saying
        how long it was."""
        lines = [f"error: {self.message}"]
        for problem in self.problems:
            lines.extend("  " + line for line in str(problem).splitlines())
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(clipped(line) for line in "\n".join(lines).split("\n"))

    def __str__(self) -> str:
        return self.render()


#: The longest line of an error as printed; a longer one is cut (the message says so).
LINE_LIMIT = 1_000


def clipped(line: str, limit: int = LINE_LIMIT) -> str:
    """``line``, or its start when it is over ``limit`` characters, saying how long it was."""
    if len(line) <= limit:
        return line
    return f"{line[: limit - 60]}... ({len(line):,} characters, cut)"


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


class FileAccessError(ScarwardenError):
    """A file or folder Scarwarden must read or write cannot be: permission denied, a
    folder where a file should be (or the reverse), a socket or FIFO where a file should
    be, a read-only or full disk."""

    exit_code = ExitCode.USAGE


#: errno -> (what is wrong with the path, how to fix it).
_ACCESS_PROBLEMS = {
    errno.EACCES: ("permission denied", "check the owner and mode of {path} (ls -ld {path})"),
    errno.EPERM: ("operation not permitted", "check its owner, mode and attributes (ls -ld {path})"),
    errno.EISDIR: ("is a folder, where a file should be", "move the folder away, then run the command again"),
    errno.ENOTDIR: (
        "is not a folder: a file is where a folder should be",
        "move the file that is in the way, then run the command again",
    ),
    errno.EEXIST: (
        "is in the way: it exists, and is not a folder",
        "move it away (a folder must be there), then run the command again",
    ),
    errno.ENOENT: ("does not exist", "check the path"),
    errno.EROFS: ("is on a read-only file system", "run where the repository can be written"),
    errno.ENOSPC: ("no space left on the device", "free some space, then run the command again"),
    errno.EDQUOT: ("disk quota exceeded", "free some space, then run the command again"),
    errno.ENAMETOOLONG: ("the name is too long", "use a shorter path"),
    errno.ELOOP: ("too many levels of symbolic links", "check the links (ls -l {path})"),
    # A socket (it cannot be opened), or a FIFO or device (scarwarden.regular_files).
    errno.ENXIO: (
        "is not a regular file: a socket, FIFO or device is where a file should be",
        "move it away (ls -l {path}), then run the command again",
    ),
}


def file_access_error(exc: OSError, *, root: str | None = None) -> FileAccessError | None:
    """``exc`` as one line naming the path and what is wrong with it, or ``None`` when it
    is not a problem with a file (then it is a bug, reported as one). A path inside
    ``root`` (the repository) is shown relative to it."""
    known = _ACCESS_PROBLEMS.get(exc.errno) if exc.errno is not None else None
    if known is None:
        return None
    # A rename names both ends; the target is the one in the way (EISDIR, EEXIST...).
    raw = exc.filename2 if exc.filename2 is not None and exc.errno != errno.EACCES else exc.filename
    if raw is None and exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        return None
    reason, hint = known
    if raw is None:
        return FileAccessError(f"cannot write: {reason}", hint=hint.format(path="."))
    name = os.fsdecode(raw) if isinstance(raw, (str, bytes, os.PathLike)) else str(raw)
    if exc.errno == errno.ENOTDIR:
        name = _in_the_way(name)
    path = _shown(name, root)
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and not os.path.lexists(name):
        # It was to be made: what refuses is the folder it goes in.
        folder = _shown(os.path.dirname(os.path.abspath(name)), root)
        return FileAccessError(f"cannot create {path}: {reason} in {folder}", hint=hint.format(path=folder))
    return FileAccessError(f"{path}: {reason}", hint=hint.format(path=path))


def _in_the_way(name: str) -> str:
    """For ``ENOTDIR``: the nearest of ``name`` and its parents that is there and is no
    folder (mkdir names the deepest folder it was making, which does not exist)."""
    path = os.path.abspath(name)
    while not (os.path.lexists(path) and not os.path.isdir(path)):
        if os.path.dirname(path) == path:
            return name
        path = os.path.dirname(path)
    return path


def _shown(path: str, root: str | None) -> str:
    if root is None:
        return path
    full, top = os.path.abspath(path), os.path.abspath(root)
    return os.path.relpath(full, top) if full.startswith(top + os.sep) else path


def one_line(exc: BaseException, *, root: str | None = None) -> str:
    """``exc`` in one line, for a warning that goes on without what failed: a file
    problem as the CLI's errors say it (the path, relative to ``root``, and what is wrong,
    with the fix; never "[Errno 13] ..."), our own error by its message and hint."""
    if isinstance(exc, OSError):
        known = file_access_error(exc, root=root)
        if known is None:
            name = exc.filename if isinstance(exc.filename, str) else None
            reason = (exc.strerror or str(exc)).lower()
            return f"{_shown(name, root)}: {reason}" if name else reason
        exc = known
    if isinstance(exc, ScarwardenError):
        return exc.message + (f"; hint: {exc.hint}" if exc.hint else "")
    return str(exc)
