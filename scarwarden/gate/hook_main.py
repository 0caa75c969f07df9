"""The installed ``reference-transaction`` and ``pre-push`` hooks' entry: ``python -m
scarwarden.gate.hook_main HOOK`` (issue 30: the hooks' cost).

It does what ``scarwarden gate-hook HOOK`` does (:func:`scarwarden.gate.refgate.run_hook`:
the same check, the same messages, the same exit codes) without the command-line face:
click and the command table are ~15-30 ms of the hook's start-up on the 2-core machine,
paid on every branch move that touches the memory. Errors are printed as the CLI prints
them (``error: ...``, ``hint: ...``, the error's exit code).
"""

from __future__ import annotations

import os
import sys

HOOKS = ("reference-transaction", "pre-push")


def main(argv: list[str]) -> int:
    from scarwarden.errors import ScarwardenError

    if len(argv) != 1 or argv[0] not in HOOKS:
        print(f"usage: python -m scarwarden.gate.hook_main {{{','.join(HOOKS)}}}", file=sys.stderr)
        return 2
    try:
        from scarwarden.gate.refgate import run_hook
        from scarwarden.repo import open_repo

        code, lines = run_hook(argv[0], sys.stdin.read().splitlines(), lambda: open_repo(".", initialised=False))
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


def _say(text: str) -> None:
    sys.stderr.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
