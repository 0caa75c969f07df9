"""Inline citations: parsing the variants a model writes, and verifying them by code."""

from __future__ import annotations

from dataclasses import dataclass, field

from scarwarden.answers.citations import (
    EPISODE_NOT_IN_RULE,
    NOT_RECALLED,
    RETIRED_RULE,
    UNKNOWN_RULE,
    format_citation,
    parse_citations,
    verify_citations,
)


@dataclass
class FakeRule:
    id: str
    title: str
    episode_ids: list[str]


@dataclass
class FakeRecall:
    rules: list[FakeRule] = field(default_factory=list)


RECALL = FakeRecall(
    [
        FakeRule(
            "PB-01",
            "Lead LinkedIn posts with the reader's pain",
            ["ep-hkgnqdz88f", "ep-vd4adns6h9", "ep-72r3dswafq"],
        ),
        FakeRule(
            "PB-02",
            "Never share discount codes on public social media",
            ["ep-wmjgdnc59j", "ep-56m702j8dv", "ep-dqq3bkemex"],
        ),
    ]
)


def test_parse_exact_spec_format() -> None:
    [c] = parse_citations("Lead with the pain [PB-03, learnt in ep-7k2m9q4x1z, ep-2b8d0c1a9f].")
    assert c.rule_id == "PB-03"
    assert c.episode_ids == ("ep-7k2m9q4x1z", "ep-2b8d0c1a9f")
    assert c.raw == "[PB-03, learnt in ep-7k2m9q4x1z, ep-2b8d0c1a9f]"
    assert c.stray == ""


def test_parse_tolerates_reasonable_variants() -> None:
    text = (
        "a [PB-03] b [ pb-04 ,  learned in:  EP-aaaa1111 ; ep-bbbb2222 and ep-cccc3333 ] "
        "c [PB-5, learnt in ep-dddd4444] d [PB-01, learnt in ep-x111; PB-02, learnt in ep-y222]"
    )
    got = [(c.rule_id, c.episode_ids) for c in parse_citations(text)]
    assert got == [
        ("PB-03", ()),
        ("PB-04", ("ep-aaaa1111", "ep-bbbb2222", "ep-cccc3333")),
        ("PB-05", ("ep-dddd4444",)),
        ("PB-01", ("ep-x111",)),
        ("PB-02", ("ep-y222",)),
    ]


def test_parse_leaves_other_brackets_alone() -> None:
    text = "See [the docs](https://x.y) and [note: PB-01 is great] and [1] and [PB-01 ep-abc1]"
    got = parse_citations(text)
    # Only the bracket that starts with a rule ID is a citation.
    assert [(c.rule_id, c.episode_ids) for c in got] == [("PB-01", ("ep-abc1",))]


def test_parse_keeps_unparsed_words() -> None:
    [c] = parse_citations("[PB-01, learnt in episode ep-abcd1234]")
    assert c.stray == "episode"
    assert c.to_json()["unparsed"] == "episode"


def test_verify_all_good() -> None:
    text = (
        "Start with the pain [PB-01, learnt in ep-hkgnqdz88f, ep-vd4adns6h9, ep-72r3dswafq]. "
        "No code in public [PB-02, learnt in ep-wmjgdnc59j]."
    )
    v = verify_citations(text, RECALL)
    assert v.ok
    assert [c.rule_id for c in v.verified] == ["PB-01", "PB-02"]
    assert v.invented == [] and v.uncited == []
    assert v.summary == "2 of 2 citation(s) verified (PB-01, PB-02)"
    data = v.to_json()
    assert data["ok"] is True and data["cited_rule_ids"] == ["PB-01", "PB-02"]


def test_verify_rule_not_recalled_and_unknown_and_retired() -> None:
    text = "[PB-03, learnt in ep-dmhmsjkxp2] [PB-99, learnt in ep-zzzz9999] [PB-15]"
    v = verify_citations(text, RECALL, known_rule_ids={"PB-01", "PB-02", "PB-03"}, retired_rule_ids={"PB-15"})
    assert not v.ok
    assert [(i.rule_id, i.kind) for i in v.invented] == [
        ("PB-03", NOT_RECALLED),
        ("PB-99", UNKNOWN_RULE),
        ("PB-15", RETIRED_RULE),
    ]
    assert v.invented[0].reason == "not recalled for this task"
    assert v.invented[1].reason == "no such rule in the playbook"
    assert v.uncited == ["PB-01", "PB-02"]
    assert "3 invented" in v.summary
    assert "recalled but not cited: PB-01, PB-02" in v.summary
    # Without the playbook, an unknown rule is still invented: it was not recalled.
    v2 = verify_citations("[PB-99]", RECALL)
    assert [i.kind for i in v2.invented] == [NOT_RECALLED]


def test_verify_episode_not_in_rule() -> None:
    # ep-wmjgdnc59j is real, but it taught PB-02, not PB-01.
    text = "[PB-01, learnt in ep-hkgnqdz88f, ep-wmjgdnc59j, ep-made0up000]"
    v = verify_citations(text, RECALL)
    assert not v.ok
    assert v.verified == []
    assert [(i.rule_id, i.episode_id, i.kind) for i in v.invented] == [
        ("PB-01", "ep-wmjgdnc59j", EPISODE_NOT_IN_RULE),
        ("PB-01", "ep-made0up000", EPISODE_NOT_IN_RULE),
    ]
    assert "ep-hkgnqdz88f, ep-vd4adns6h9, ep-72r3dswafq" in v.invented[0].reason
    # A rule cited, even wrongly, is not "uncited".
    assert v.uncited == ["PB-02"]


def test_verify_an_id_too_short_to_exist_is_invented_not_filler() -> None:
    # "ep-xx" cannot be an episode ID; it must not pass as a citation without episodes.
    v = verify_citations("Never post codes [PB-02, learnt in ep-xx].", RECALL)
    assert not v.ok and v.verified == [] and v.incomplete == []
    assert [(i.rule_id, i.episode_id, i.kind) for i in v.invented] == [
        ("PB-02", "ep-xx", EPISODE_NOT_IN_RULE)
    ]


def test_verify_no_citations_and_incomplete() -> None:
    v = verify_citations("Just some text.", RECALL)
    assert v.ok and v.citations == []
    assert v.summary == "no citations in the answer; recalled but not cited: PB-01, PB-02"
    v2 = verify_citations("Do it [PB-01].", RECALL)
    assert v2.ok and v2.incomplete == ["PB-01"]
    assert "cited without episodes: PB-01" in v2.summary


def test_verify_repeated_citations_count_once_per_rule() -> None:
    text = "[PB-01, learnt in ep-hkgnqdz88f] and again [PB-01, learnt in ep-72r3dswafq]"
    v = verify_citations(text, RECALL)
    assert len(v.verified) == 2 and v.cited_rule_ids == ["PB-01"]


def test_format_citation_round_trips() -> None:
    text = format_citation("PB-01", ["ep-hkgnqdz88f", "ep-vd4adns6h9"])
    assert text == "[PB-01, learnt in ep-hkgnqdz88f, ep-vd4adns6h9]"
    [c] = parse_citations(text)
    assert c.episode_ids == ("ep-hkgnqdz88f", "ep-vd4adns6h9")
