"""Recall version 5 (issue 26): a returned rule's evidence adds to the rule (values,
names, the case), never the sentences the rule already says; the episode is always
named. The long-rule cap is re-fitted (2.75 x the average; version 4 kept 2.0)."""

from __future__ import annotations

from collections import Counter

from helpers import write_episode
from test_recall_v4 import _book, _ep

from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.index import open_index
from scarwarden.recall import evidence
from scarwarden.recall.engine import recall, recall_task
from scarwarden.recall.formulas import LONG_RULE, LONG_RULE_V4, length_share
from scarwarden.recall.router import RETURN_SHARE, returned
from scarwarden.recall.score import TaskTerms
from scarwarden.repo import MemoryRepo

TASK = "Refund the duplicate invoice charge for Mia Li"
RULE = ("PB-01", "Refund duplicates to the card", "Refund duplicate charges to the original card.")


def test_evidence_leaves_out_what_the_rule_says(memory_repo: MemoryRepo) -> None:
    correction = (
        "Refund duplicate charges to the original card."
        " The duplicate was $45.20 on invoice INV-778 for Mia Li."
    )
    write_episode(memory_repo, _ep(1), task=TASK, correction=correction)
    _book(memory_repo, [pb.make_rule(*RULE, ["refund"], [_ep(1)])])
    res = recall_task(memory_repo, TASK, log=False)
    [rule] = res.rules
    [quote] = rule.quotes
    # version 4 quoted both sentences (they fit in 240 characters), repeating the rule
    assert quote == evidence.Evidence(_ep(1), "The duplicate was $45.20 on invoice INV-778 for Mia Li.")


def test_evidence_that_only_repeats_the_rule_names_the_episode_with_no_text(
    memory_repo: MemoryRepo, cli
) -> None:  # type: ignore[no-untyped-def]
    write_episode(memory_repo, _ep(1), task=TASK, correction="Refund the duplicate charges to the card!")
    _book(memory_repo, [pb.make_rule(*RULE, ["refund"], [_ep(1)])])
    res = recall_task(memory_repo, TASK, log=False)
    assert res.to_json()["rules"][0]["evidence"] == [{"episode_id": _ep(1), "text": ""}]
    out = cli("recall", "--no-log", TASK).stdout
    assert f"evidence ({_ep(1)}): {evidence.NOTHING_MORE}" in out


def test_fifty_citations_repeating_the_rule_stay_bounded(memory_repo: MemoryRepo) -> None:
    said = "Refund duplicate charges to the original card. " * 3 + "Case " + "x" * 400
    for i in range(50):
        write_episode(memory_repo, _ep(i), task=TASK, correction=said)
    _book(memory_repo, [pb.make_rule(*RULE, ["refund"], [_ep(i) for i in range(50)])])
    res = recall_task(memory_repo, TASK, log=False)
    for rule in res.rules:
        [quote] = rule.quotes
        assert len(quote.text) <= evidence.MAX_CHARS and "Refund duplicate" not in quote.text


def test_quote_with_the_rule_stems_keeps_only_sentences_that_add() -> None:
    said = evidence.rule_stems("Refund to the card", "Refund charges to the card.")
    correction = "Refund charges to the card. Card ending 4242. Refund!"
    assert evidence.quote(correction, {"refund": 1.0}) == correction  # version 4
    assert evidence.quote(correction, {"refund": 1.0}, said) == "Card ending 4242."


def test_the_long_rule_cap_is_version_5s_fitted_value_and_version_4s_before() -> None:
    assert (LONG_RULE, LONG_RULE_V4) == (2.75, 2.0)
    assert length_share(250, 100.0) == 1.0  # version 4's cap (2.0) counted it as 0.8
    assert length_share(250, 100.0, LONG_RULE_V4) == 0.8

    def terms(version: int) -> TaskTerms:
        return TaskTerms(Counter(), {}, 0, 0.0, 0.0, version=version)

    assert terms(4).long_rule == 2.0 and terms(5).long_rule == 2.75


def _best_and_weak(memory_repo: MemoryRepo) -> None:
    """PB-01 matches the task's case; PB-02 shares one word ("invoice") with it."""
    write_episode(memory_repo, _ep(1), task=TASK, correction="Refund to the card for Mia Li.")
    best = pb.make_rule(
        "PB-01",
        "Refund duplicate invoice charges",
        "Refund a duplicate invoice charge to the card.",
        ["refund"],
        [_ep(1)],
    )
    weak = pb.make_rule("PB-02", "Invoices by email", "Send every invoice by email.", [], [_ep(1)])
    _book(memory_repo, [best, weak])


def test_a_rule_far_below_the_best_is_not_returned(memory_repo: MemoryRepo) -> None:
    """Version 5 returns a rule only when it scores at least RETURN_SHARE x the best."""
    _best_and_weak(memory_repo)
    with open_index(memory_repo) as index:
        probe = recall(index, TASK, settings=RecallSettings(floor=0.0), share=0.0)
        scores = {r.id: r.score for r in probe.rules}
        assert scores["PB-02"] < RETURN_SHARE * scores["PB-01"]  # the case this test is about
        got = recall(index, TASK, settings=RecallSettings(floor=0.0))
    assert [r.id for r in got.rules] == ["PB-01"]
    assert returned(probe.rules, "ACT", RecallSettings(floor=0.0), version=4) == probe.rules


def test_explain_names_the_rules_the_return_share_left_out(memory_repo: MemoryRepo) -> None:
    """``--explain`` says which rules over the floor the return share kept out of
    ``rules``, with the bar they missed; a probe with share 0 leaves none out."""
    from scarwarden.recall.explain import explain_data, explain_lines

    _best_and_weak(memory_repo)
    with open_index(memory_repo) as index:
        got = recall(index, TASK, settings=RecallSettings(floor=0.0))
        probe = recall(index, TASK, settings=RecallSettings(floor=0.0), share=0.0)
    weak_score = next(r.score for r in probe.rules if r.id == "PB-02")
    router = explain_data(got)["router"]
    assert router["return_share"] == RETURN_SHARE
    assert router["left_by_share"] == [{"id": "PB-02", "score": weak_score}]
    [line] = [x for x in explain_lines(got) if "return share" in x]
    assert "PB-02" in line and f"{RETURN_SHARE:g} x the best's" in line
    assert explain_data(probe)["router"]["left_by_share"] == []
    assert not [x for x in explain_lines(probe) if "return share" in x]
