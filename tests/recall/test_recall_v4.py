"""Recall version 4 (issue 26): a rule ranks by its single closest cited episode, a long
rule is not punished for its length, every returned rule carries bounded evidence, and
ASK_HUMAN shows the nearest candidates apart from ``rules``."""

from __future__ import annotations

from conftest import git
from helpers import write_episode

from scarwarden.files import playbook as pb
from scarwarden.files.redact import redact
from scarwarden.index import open_index
from scarwarden.recall import evidence
from scarwarden.recall.engine import MAX_TASK_CHARS, recall, recall_task
from scarwarden.recall.explain import explain_data, explain_lines
from scarwarden.recall.formulas import LONG_RULE, length_share
from scarwarden.recall.router import ASK_HUMAN
from scarwarden.repo import MemoryRepo

REFUND = "Refund a duplicate invoice charge to the original card"
LONG_FIX = (
    "Refund duplicate invoice charges to the original card within two days, never as store credit. "
    + " ".join(
        f"Sentence {i} repeats the refund policy for invoices in other words than the first."
        for i in range(9)
    )
)


#: Rules about other things: an episode word is left out when the episodes of more than
#: half the rules say it, so a memory of one or two rules would find none.
OTHERS = [
    ("PB-91", "Canary deploys", "Deploy to a canary first."),
    ("PB-92", "Meeting notes", "Write minutes."),
]
OTHERS += [("PB-93", "Webinar invites", "Give the timezone."), ("PB-94", "Release notes", "Plain words.")]


def _book(repo: MemoryRepo, rules: list[pb.Rule]) -> None:
    for i, (rule_id, title, body) in enumerate(OTHERS):
        write_episode(repo, f"ep-other{i:05d}", task=title, correction=body)
    rules = rules + [pb.make_rule(r, t, b, [], [f"ep-other{i:05d}"]) for i, (r, t, b) in enumerate(OTHERS)]
    repo.playbook_path.write_text(pb.render(pb.Playbook(rules=tuple(rules))))
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "--no-verify", "-m", "memory")


def _ep(i: int) -> str:
    return f"ep-v4{i:08d}"


def test_many_citations_do_not_win_by_number(memory_repo: MemoryRepo) -> None:
    """The episode part is the closest episode's, not a sum over 50 citations."""
    for i in range(50):
        write_episode(memory_repo, _ep(i), task="refund invoice", correction=LONG_FIX)
    write_episode(memory_repo, _ep(99), task="refund invoice", correction="Refund to the card.")
    many = pb.make_rule("PB-01", "Money back", "Pay it back.", ["money"], [_ep(i) for i in range(50)])
    one = pb.make_rule("PB-02", "Money returned", "Pay it back.", ["money"], [_ep(99)])
    _book(memory_repo, [many, one])
    with open_index(memory_repo) as index:
        res = recall(index, "refund the invoice")
    by_id = {r.id: r for r in (res.rules or [res.stats.best])}  # type: ignore[list-item]
    if "PB-01" in by_id and "PB-02" in by_id:
        # the same closest episode words: the same episode part, whatever the count
        assert (
            by_id["PB-01"].contributions["episode:refund"] == by_id["PB-02"].contributions["episode:refund"]
        )
    for rule in res.rules:
        assert len({ep for m in rule.via_episodes for ep, _f, _tf in m.via}) == 1
        # bounded evidence from one episode
        [quote] = rule.quotes
        assert len(quote.text) <= evidence.MAX_CHARS and quote.episode_id in rule.episode_ids


def test_evidence_is_bounded_and_skips_missing_and_redacted_corrections(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, _ep(1), task=REFUND)  # no correction
    write_episode(memory_repo, _ep(2), task=REFUND, correction="Secret: refund to card 4242 only.")
    write_episode(memory_repo, _ep(3), task="card refunds", correction="Refunds always go back to the card.")
    rule = pb.make_rule(
        "PB-01",
        "Refund to the card",
        "Refund duplicate charges to the card.",
        ["refund"],
        [_ep(1), _ep(2), _ep(3)],
    )
    _book(memory_repo, [rule])
    res = recall_task(memory_repo, REFUND, log=False)
    [got] = res.rules
    [quote] = got.quotes
    assert quote.episode_id == _ep(2) and "4242" in quote.text  # the closest with a correction
    redact(memory_repo, _ep(2), "leaked card number")
    res = recall_task(memory_repo, REFUND, log=False)
    [got] = res.rules
    [quote] = got.quotes
    assert quote.episode_id == _ep(3) and "4242" not in res.dumps()  # removed text never appears
    assert quote.text == "Refunds always go back to the card."
    assert res.to_json()["rules"][0]["evidence"] == [{"episode_id": _ep(3), "text": quote.text}]


def test_a_rule_whose_episodes_have_no_correction_gives_no_evidence(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, _ep(1), task=REFUND)
    _book(
        memory_repo,
        [pb.make_rule("PB-01", "Refund to the card", "Refund charges to the card.", ["refund"], [_ep(1)])],
    )
    res = recall_task(memory_repo, REFUND, log=False)
    assert res.rules and res.rules[0].quotes == [] and res.to_json()["rules"][0]["evidence"] == []


def test_a_long_rule_counts_as_long_rule_times_the_average() -> None:
    assert length_share(100, 100.0) == 1.0 and length_share(int(LONG_RULE * 100), 100.0) == 1.0
    assert length_share(800, 100.0) == LONG_RULE * 100 / 800


def test_a_long_rule_is_not_punished_for_its_length(memory_repo: MemoryRepo) -> None:
    long_text = "Refund duplicate invoice charges to the original card. " + " ".join(
        f"Clause{i} about unrelated matter{i} and topic{i}." for i in range(60)
    )
    write_episode(memory_repo, _ep(1), task="refunds", correction="To the card.")
    rules = [pb.make_rule("PB-01", "Refund duplicate invoices to the card", long_text, ["refund"], [_ep(1)])]
    _book(memory_repo, rules)
    with open_index(memory_repo) as index:
        res = recall(index, REFUND)
        best = res.stats.best  # type: ignore[union-attr]
        assert best is not None and best.id == "PB-01"
        plain = best.matched_mass / (res.stats.task_mass * best.rule_mass) ** 0.5  # type: ignore[union-attr]
        assert best.confidence > round(plain, 4)  # version 3's would be `plain`
        lines = "\n".join(explain_lines(res))
    assert "counts as" in lines and "x the average rule" in lines


def test_ask_human_shows_candidates_never_in_rules(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, _ep(1), task="Deploy the canary", correction="Canary first, one hour.")
    rule = pb.make_rule(
        "PB-01", "Canary before production", "Deploy to a canary first.", ["canary"], [_ep(1)]
    )
    _book(memory_repo, [rule])
    res = recall_task(memory_repo, "Rename the production Kafka topic", log=False)
    assert res.verdict == ASK_HUMAN and res.rules == []
    data = res.to_json()
    assert data["rules"] == [] and [c["id"] for c in data["candidates"]] == ["PB-01"]
    assert data["candidates"][0]["kind"] == "rule" and data["candidates"][0]["evidence"][0][
        "episode_id"
    ] == _ep(1)
    assert "PB-01" not in data["receipt"]["rules"]


def test_with_no_rule_near_the_nearest_failed_episodes_are_candidates(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, _ep(1), task="Rotate the kafka credentials", correction="Ask security first.")
    write_episode(memory_repo, _ep(2), task="Rotate the kafka topics", outcome="fine")  # no correction
    write_episode(memory_repo, _ep(3), task="Deploy the canary", correction="Canary first.")
    _book(memory_repo, [pb.make_rule("PB-01", "Canary", "Deploy to a canary first.", ["canary"], [_ep(3)])])
    res = recall_task(memory_repo, "Rotate kafka secrets", log=False)
    assert res.verdict == ASK_HUMAN
    cands = res.to_json()["candidates"]
    assert [(c["kind"], c["id"]) for c in cands] == [("episode", _ep(1))]
    assert cands[0]["evidence"] == [{"episode_id": _ep(1), "text": "Ask security first."}]


def test_no_candidate_at_all_is_an_empty_list_and_the_text_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("recall", "--json", "--no-log", "Xylophone zebra quux")
    assert '"candidates": []' in out.stdout
    text = cli("recall", "--no-log", "Xylophone zebra quux").stdout
    assert "nearest, unconfirmed: ask before using" in text and "(none: no rule" in text


def test_a_stopword_task_and_a_20000_character_task(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, _ep(1), task=REFUND, correction="Refund to the card.")
    _book(
        memory_repo,
        [pb.make_rule("PB-01", "Refund to the card", "Refund charges to the card.", ["refund"], [_ep(1)])],
    )
    res = recall_task(memory_repo, "the and of to", log=False)
    assert res.verdict == ASK_HUMAN and res.rules == [] and res.candidates == []
    long_task = (REFUND + " ") * (MAX_TASK_CHARS // (len(REFUND) + 1))
    res = recall_task(memory_repo, long_task[:MAX_TASK_CHARS], log=False)
    for rule in res.rules:
        assert all(len(q.text) <= evidence.MAX_CHARS for q in rule.quotes)


def test_explain_and_json_name_the_closest_episode(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, _ep(1), task=REFUND, correction="Refund to the card.")
    write_episode(memory_repo, _ep(2), task="Something else", correction="Other.")
    rule = pb.make_rule(
        "PB-01", "Refund to the card", "Refund charges to the card.", ["refund"], [_ep(2), _ep(1)]
    )
    _book(memory_repo, [rule])
    with open_index(memory_repo) as index:
        res = recall(index, REFUND)
    assert res.rules[0].closest_episode == _ep(1)
    data = explain_data(res)
    assert data["rules"][0]["closest_episode"] == _ep(1)
    assert f"closest cited episode: {_ep(1)}" in "\n".join(explain_lines(res))


def test_sentences_and_quote_keep_the_best_sentence_first_within_the_bound() -> None:
    said = "Always ask. Refund duplicate invoices to the card. " + "Long filler sentence here. " * 20
    got = evidence.quote(said, {"refund": 2.0, "invoic": 1.0})
    assert got.startswith("Refund duplicate invoices") or "Refund duplicate invoices" in got
    assert len(got) <= evidence.MAX_CHARS
    assert (
        evidence.quote("x" * 1000, {}).endswith("...")
        and len(evidence.quote("x " * 500, {})) <= evidence.MAX_CHARS
    )
