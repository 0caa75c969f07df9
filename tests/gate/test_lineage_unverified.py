"""Lineage counts only the receipts the gate re-derives (issue 27).

Before: an application counted as "verified" whenever its receipt listed the rule, so
three corrected episodes carrying receipts of algorithm 99 or made over uncommitted
episodes (``+uncommitted``), which the gate only warns about, turned a healthy rule
into "struggling" (distill proposed retiring it), and ``check`` counted those
receipts as "re-derived".
"""

from __future__ import annotations

import json
from typing import Any

from conftest import Cli, git

from scarwarden.files.receipt import Receipt
from scarwarden.repo import MemoryRepo

RULE = "PB-02"
TASK = "Post our discount code on Twitter"


def forged(cli: Cli, task: str, **override: Any) -> dict[str, Any]:
    """The receipt recall printed for ``task``, fields overridden, its hash recomputed."""
    out = cli("recall", "--json", task)
    assert out.exit_code == 0, out.output
    fields = json.loads(out.stdout)["receipt"]
    fields.pop("receipt")
    fields.update(override)
    return Receipt.make(**fields).to_json()


def record(cli: Cli, repo: MemoryRepo, episodes: list[dict[str, Any]]) -> None:
    """Through ``episode add --file``: the gate's check runs (unverifiable receipts are
    a warning, not a refusal)."""
    path = repo.root.parent / "batch.json"
    path.write_text(json.dumps(episodes))
    out = cli("episode", "add", "--file", str(path))
    assert out.exit_code == 0, out.output


def record_corrections(cli: Cli, repo: MemoryRepo) -> None:
    """Three corrections of RULE whose receipts the gate cannot re-derive; the gate
    lets them in with a warning (unverifiable is not a refusal)."""
    receipts = [
        forged(cli, TASK, algorithm=99),
        forged(cli, TASK, algorithm=99),
        forged(cli, TASK, ledger=forged(cli, TASK)["ledger"] + "+uncommitted"),
    ]
    assert receipts[0]["rules"][0] == RULE
    episodes = [
        {
            "task": TASK,
            "action": "Posted it",
            "correction": "Never post the code",
            "rules_applied": [RULE],
            "recalled": r,
        }
        for r in receipts
    ]
    record(cli, repo, episodes)


def test_receipts_the_gate_cannot_rederive_are_not_counted(cli: Cli, demo_repo: MemoryRepo) -> None:
    record_corrections(cli, demo_repo)
    out = cli("rule", "show", RULE, "--json")
    assert out.exit_code == 0, out.output
    lineage = json.loads(out.stdout)["lineage"]
    assert lineage["struggling"] is False
    assert lineage["corrected"] == 0 and lineage["applied"] == 0
    # The demo memory has one application of its own, with no receipt: not counted either.
    assert lineage["not_counted"] == 4 and lineage["not_counted_unverifiable"] == 3
    text = cli("rule", "show", RULE)
    assert "4 not verified, not counted (3 with a receipt the gate could not re-derive)" in text.stdout


def test_distill_does_not_propose_retiring_the_rule(cli: Cli, demo_repo: MemoryRepo) -> None:
    from scarwarden.index import open_index
    from scarwarden.index.lineage import struggling

    record_corrections(cli, demo_repo)
    with open_index(demo_repo) as index:
        assert struggling(index, RULE) is None


def test_check_does_not_call_them_rederived(cli: Cli, demo_repo: MemoryRepo) -> None:
    record_corrections(cli, demo_repo)
    out = cli("check", "--all")
    assert out.exit_code == 0, out.output
    assert "3 receipts not re-derived" in out.output
    assert "receipts re-derived" not in out.output and "receipt re-derived" not in out.output
    base = git(demo_repo.root, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    out = cli("check", "--from-ref", base)
    assert out.exit_code == 0, out.output
    assert "re-derived" not in out.output


def test_an_honest_receipt_is_still_counted(cli: Cli, demo_repo: MemoryRepo) -> None:
    from scarwarden.files.receipt import rederivable

    honest = forged(cli, TASK)
    assert rederivable(honest)
    episode = {
        "task": TASK,
        "action": "Kept it out",
        "outcome": "Fine",
        "rules_applied": [RULE],
        "recalled": honest,
    }
    record(cli, demo_repo, [episode])
    lineage = json.loads(cli("rule", "show", RULE, "--json").stdout)["lineage"]
    assert lineage["applied_total"] == 1 and lineage["counted"] == "verified"
    assert lineage["not_counted_unverifiable"] == 0


def test_the_versions_match_the_gates() -> None:
    from scarwarden.files.receipt import REDERIVED
    from scarwarden.gate.proofs import IMPLEMENTED

    assert tuple(IMPLEMENTED) == REDERIVED
