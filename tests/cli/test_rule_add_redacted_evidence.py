"""``rule add --cites`` an episode whose content was redacted committed the rule with
no word said: every other view flags such a rule 'evidence redacted' (rule show, recall,
check --all, review, exports; docs/privacy.md), and ``distill`` proposes retiring a rule
left with no unredacted evidence. ``rule add`` now warns the same way on stderr (the
rule is still added; ``--json`` stays one JSON document on stdout)."""

from __future__ import annotations

import json

from conftest import Cli

REDACTED = "ep-hkgnqdz88f"  # episodes of the demo ledger
KEPT = "ep-wmjgdnc59j"


def test_citing_redacted_evidence_is_flagged(cli: Cli) -> None:
    assert cli("redact", REDACTED, "--reason", "pasted a key").exit_code == 0
    alone = cli("rule", "add", "--text", "Rotate leaked keys at once.", "--cites", REDACTED, "--json")
    assert alone.exit_code == 0, alone.output
    rule_id = json.loads(alone.stdout)["id"]
    assert f"warning: {rule_id} cites {REDACTED}: evidence redacted; no unredacted evidence is left" in (
        alone.stderr
    ), alone.stderr
    both = cli("rule", "add", "--text", "Rotate keys each quarter.", "--cites", f"{KEPT},{REDACTED}")
    assert both.exit_code == 0, both.output
    assert f"cites {REDACTED}: evidence redacted (1 other citation(s) left)" in both.stderr, both.stderr
    clean = cli("rule", "add", "--text", "Check keys before posting.", "--cites", KEPT)
    assert clean.exit_code == 0 and "evidence redacted" not in clean.stderr
