"""The recall algorithm's version, recorded in every recall receipt.

A receipt can be proved only by re-running the recall that made it
(:mod:`scarwarden.gate.proofs`), so a receipt made by a version the gate does not
reproduce (:data:`scarwarden.recall.pure.IMPLEMENTS`) is reported as *unverifiable*,
never as a pass. Bump :data:`ALGORITHM` in the same commit as any change that can change
what recall returns for some playbook, ledger and task: the text pipeline
(:mod:`scarwarden.text`), the score or confidence (:mod:`scarwarden.recall.score`), the
router (:mod:`scarwarden.recall.router`), which candidates are considered
(:mod:`scarwarden.recall.engine`) or the settings' meaning.
``tests/recall/test_pure_recall.py`` pins a fingerprint of recall's output on a generated
playbook to this number and fails when one moves without the other.
"""

from __future__ import annotations

#: 1: BM25 + tag hits ranking, confidence router (docs/recall.md), November 2026.
#: 2: issue 13: words of the episodes a rule cites, ledger weights of words past tasks
#:    say, N-stable evidence in the router; lineage (struggling rules), December 2026.
#:    Depends on the ledger, not only on the playbook, so its receipts also name the
#:    ledger (the episodes folder's tree ID, issue 20) and the gate re-derives them
#:    from that tree (:mod:`scarwarden.recall.pure_ledger`); version-2 receipts made
#:    before receipts named the ledger stay unverifiable. Lineage counts only
#:    receipt-verified applications where receipts exist (issue 20, the same change):
#:    no receipt that can be proved was made under the older counting.
#: 3: issue 13: pairs of adjacent stems (``pair:credit card``): a task's pair that a
#:    rule's title or text also says adds a BM25 term over the pair (idf over the rules
#:    saying it), weighted as the pair's weaker word; ranking only (the confidence, the
#:    evidence and the router read words as in version 2), December 2026. The gate
#:    re-derives versions 2 and 3 (:mod:`scarwarden.recall.pure_ledger`).
#: 4: issue 26: a rule ranks by its own words plus its single closest cited episode
#:    (the maximum over its citations, not a sum that grows with every citation); a
#:    rule longer than LONG_RULE x the average rule counts in the confidence as that
#:    long (its words no one task touches do not drag a strong match under the floor);
#:    each returned rule carries evidence (its closest cited episode's correction
#:    sentences), named in the receipt, December 2026. The gate re-derives versions 2,
#:    3 and 4.
#: 5: issue 26: a returned rule's evidence adds to the rule: the closest cited episode's
#:    sentences whose words the rule does not already all say (values, names, the
#:    case); the episode is named even when none is left (empty text). Ranking and
#:    router as version 4, December 2026. The gate re-derives versions 2 to 5.
#: 6: issue 26: the same-case term: a rule whose closest cited episode's task says much
#:    of this task adds CASE_WEIGHT x share ** CASE_POWER x task_mass
#:    (:func:`scarwarden.recall.formulas.same_case`), so the lesson of this very case
#:    outranks a rule of the same user from another task; and every one of the first
#:    pass's ``limit + 10`` candidates is scored exactly (version 5 scored only the top
#:    ``limit`` and ties). Confidence, router and evidence as version 5, December 2026.
#:    The gate re-derives versions 2 to 6.
ALGORITHM = 6
