"""The CLI's error boundary and its ``-C``, without click: how an exception becomes a
message and an exit code, and which repository a command runs in, shared by the click
group (:mod:`scarwarden.cli.group`) and the click-free recall door
(:mod:`scarwarden.cli.door`), so both say the same words."""

from __future__ import annotations

import sys

from scarwarden.cli.output import echo
from scarwarden.errors import ScarwardenError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging

    from scarwarden.repo import MemoryRepo


def printable(message: str) -> str:
    """``message`` writable as UTF-8 whatever it quotes (a lone surrogate is escaped)."""
    return message.encode("utf-8", "backslashreplace").decode("utf-8")


def argument_problem(args: list[str]) -> ScarwardenError | None:
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


def setup_logging() -> None:
    """Warnings on stderr as ``scarwarden: <message>``, set up when the first one is
    logged (:mod:`scarwarden.logs`): a run that warns of nothing never imports logging."""
    from scarwarden.logs import when_used

    when_used(_stderr_handler)


def _stderr_handler(logger: logging.Logger) -> None:
    import logging

    class StderrHandler(logging.Handler):
        scarwarden_cli = True

        def emit(self, record: logging.LogRecord) -> None:
            echo(f"scarwarden: {record.getMessage()}", err=True)

    if not any(getattr(h, "scarwarden_cli", False) for h in logger.handlers):
        logger.addHandler(StderrHandler())
    logger.setLevel(logging.INFO)
    # Propagation stays on: the root logger has no handler in the CLI (so nothing is
    # printed twice) and test harnesses that listen on the root still see the records.


def no_identity(exc: ScarwardenError) -> ScarwardenError | None:
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


def expected(exc: Exception, repo_path: str) -> ScarwardenError | None:
    """An exception from outside our code that is still the user's to fix, as our error:
    a file or folder that cannot be read or written (the path and what is wrong, exit
    2), an index SQLite cannot open. ``None``: a bug, reported as one."""
    from scarwarden.errors import FileAccessError, file_access_error

    if isinstance(exc, OSError):
        return file_access_error(exc, root=repo_path)
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


def internal_error_text(exc: BaseException) -> str:
    """What a bug of ours prints (exit 3): one line and how to report it."""
    return (
        printable(f"error: internal error: {type(exc).__name__}: {exc}")
        + "\nhint: this is a bug in Scarwarden, not in your input; run again with --debug "
        "(or SCARWARDEN_DEBUG=1) for the traceback, and report it"
    )


def debug_asked(flag: bool) -> bool:
    """``--debug``, or ``SCARWARDEN_DEBUG`` set to anything but empty or 0."""
    import os

    return flag or os.environ.get("SCARWARDEN_DEBUG", "") not in ("", "0")


def open_repo_at(path: str, *, given: bool, initialised: bool = True) -> MemoryRepo:
    """The memory repository a command runs in: ``path`` from ``-C/--repo`` (``given``)
    or the cwd's ``.``."""
    from pathlib import Path

    from scarwarden.errors import UsageError
    from scarwarden.repo import open_repo

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


def report_error(exc: Exception, *, debug: bool, repo_path: str) -> int:
    """Print ``exc`` as the boundary does, on stderr, and return its exit code: our
    error's message and hint (with the traceback under ``--debug``), one the user can
    fix (:func:`expected`), or an internal error (exit 3; re-raised under ``--debug``).
    Called inside the ``except`` of the click group and of the recall door."""
    from scarwarden.errors import ExitCode, ScarwardenError

    error = exc if isinstance(exc, ScarwardenError) else expected(exc, repo_path)
    if error is None:
        if debug:
            raise exc
        echo(internal_error_text(exc), err=True)
        return int(ExitCode.CHECK_FAILED)
    if debug:
        import traceback  # ~5 ms: only on this path

        traceback.print_exc()
    error = no_identity(error) or error
    echo(printable(error.render()), err=True)
    return int(error.exit_code)
