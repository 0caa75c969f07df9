"""The installed hooks' entry: ``python -m scarwarden.gate.hook_main HOOK`` (issue 30:
the hooks' cost).

For ``reference-transaction`` and ``pre-push`` it does what ``scarwarden gate-hook HOOK``
does (:func:`scarwarden.gate.refgate.run_hook`); for ``pre-commit`` and
``pre-merge-commit`` what ``scarwarden check --staged`` does: the same check, the same
messages, the same exit codes, without the command-line face (click and the command
table are ~15-30 ms of a hook's start-up on the 2-core machine, paid on every commit).
Errors are printed as the CLI prints them (``error: ...``, ``hint: ...``, the error's
exit code). Under the pre-commit framework's range variables the CLI itself runs.
"""

from __future__ import annotations

import os
import sys

from scarwarden.files.input_policy import printable

REF_HOOKS = ("reference-transaction", "pre-push")
COMMIT_HOOKS = ("pre-commit", "pre-merge-commit")
HOOKS = COMMIT_HOOKS + REF_HOOKS


def main(argv: list[str]) -> int:
    from scarwarden.errors import ScarwardenError

    if len(argv) != 1 or argv[0] not in HOOKS:
        print(f"usage: python -m scarwarden.gate.hook_main {{{','.join(HOOKS)}}}", file=sys.stderr)
        return 2
    framework = os.environ.get("PRE_COMMIT_FROM_REF") and os.environ.get("PRE_COMMIT_TO_REF")
    if argv[0] in COMMIT_HOOKS and framework:  # the range the framework names: the CLI's own path
        os.execv(sys.executable, [sys.executable, "-m", "scarwarden", "check", "--staged"])  # noqa: S606
    try:
        if argv[0] in COMMIT_HOOKS:
            return _staged()
        from scarwarden.gate.refgate import run_hook
        from scarwarden.repo import open_repo

        lines = sys.stdin.read().splitlines()
        code, lines = run_hook(argv[0], lines, lambda: open_repo(".", initialised=False))
    except ScarwardenError as exc:
        _say(exc.render())
        return int(exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - the boundary, as the CLI's: no traceback
        if os.environ.get("SCARWARDEN_DEBUG", "") not in ("", "0"):
            raise
        _say(
            f"error: internal error: {type(exc).__name__}: {exc}\nhint: this is a bug in Scarwarden, "
            "not in your input; run again with SCARWARDEN_DEBUG=1 for the traceback, and report it"
        )
        return 1
    for line in lines:
        _say(line)
    return code


def _staged() -> int:
    """``scarwarden check --staged``: warnings on stderr, problems and the summary on
    stdout, exit 1 when the gate refuses."""
    from scarwarden.gate.check import check_staged
    from scarwarden.gate.report import problem_lines
    from scarwarden.git.batch import session
    from scarwarden.repo import open_repo

    with session():
        report = check_staged(open_repo(".", initialised=False))
    if report.no_memory and report.ok and not report.warnings:
        return 0  # no memory in git, nothing checked: a code repository's commits stay quiet
    for warning in report.warnings:
        _say(f"warning: {warning}")
    lines = problem_lines(report.problems, report.summary())
    sys.stdout.write(printable("".join(f"{line}\n" for line in lines)))
    return 0 if report.ok else 1


def _say(text: str) -> None:
    sys.stderr.write(printable(text) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
