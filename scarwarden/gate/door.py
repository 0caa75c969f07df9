"""The gate at every write door (issue 27): what a door writes, the gate has passed.

Without hooks installed (the default when ``init`` runs without a terminal) nothing
would judge a commit that ``episode add``, ``rule add``, ``ask``, ``redact``, MCP's
``record_episode`` or the web form makes; an episode the gate refuses (a receipt for
another task, say) would land, and an append-only ledger would fail ``check --all`` and
``verify`` from then on. So each door passes :func:`gate_check` down to the commit
(:func:`scarwarden.git.index_commit.prepare_commit`): the provenance gate
(:func:`scarwarden.gate.check.check_staged`, the pre-commit hook's own check) judges the
exact tree about to be committed, in the commit's private index, before HEAD moves. A
refusal writes nothing: the files written are taken back, no commit is made.

The files layer may not import the gate (import-linter layers), so the check is a
callable the door passes down, as distill's commit and ``redact`` already did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scarwarden.errors import ValidationError
from scarwarden.repo import MemoryRepo

#: Judges the tree in the index the env selects; raises to refuse.
Check = Callable[[Mapping[str, str]], None]


def gate_check(repo: MemoryRepo, what: str = "the change") -> Check:
    """The provenance gate as a commit's check: raises :class:`ValidationError` naming
    every problem (each with the fix in its hint) when the gate refuses ``what``."""

    def check(env: Mapping[str, str]) -> None:
        from scarwarden.gate.check import check_staged

        report = check_staged(repo, env=env)
        if not report.ok:
            raise ValidationError(
                f"{what} does not pass the provenance gate; nothing was written or committed",
                problems=list(report.problems),
                hint="each problem above says how to fix it (the same check the "
                "pre-commit hook, 'check' and 'verify' run)",
            )

    # The whole gate ran on the commit's tree against its parent: the commit is marked
    # so the reference-transaction hook need not start Python for that move
    # (:data:`scarwarden.git.index_commit.DOOR_MARKS`).
    check.vouches = True  # type: ignore[attr-defined]
    return check
