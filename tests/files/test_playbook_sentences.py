"""Per-sentence provenance in the playbook (issue 25): '- Sentences from:'."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files import playbook_sentences as ps
from scarwarden.files.playbook_sentences import Source

RULE = """# Playbook

## PB-01: Book with the right payment

Pay with the certificate first. Then put the rest on the card.

- Tags: payment
- Learnt in: ep-aaaaaaaaaa, ep-bbbbbbbbbb
- Sentences from: 1: ep-aaaaaaaaaa; 2: ep-aaaaaaaaaa, ep-bbbbbbbbbb (model)
"""


def test_a_map_round_trips_and_says_where_each_sentence_came_from() -> None:
    book = pb.parse(RULE)
    assert pb.render(book) == RULE
    said = book.rules[0].said()
    assert [(s.sentence, s.episode_ids, s.kind) for s in said] == [
        ("Pay with the certificate first.", ("ep-aaaaaaaaaa",), "stated"),
        ("Then put the rest on the card.", ("ep-aaaaaaaaaa", "ep-bbbbbbbbbb"), "model"),
    ]
    assert book.rules[0].to_json()["sentences_from"]["2"] == {
        "episode_ids": ["ep-aaaaaaaaaa", "ep-bbbbbbbbbb"],
        "model": True,
    }


def test_an_old_rule_without_a_map_is_from_the_rules_citations() -> None:
    old = RULE.replace("- Sentences from: 1: ep-aaaaaaaaaa; 2: ep-aaaaaaaaaa, ep-bbbbbbbbbb (model)\n", "")
    rule = pb.parse(old).rules[0]
    assert rule.sources == ()
    assert {s.kind for s in rule.said()} == {"rule"}
    assert rule.said()[0].episode_ids == ("ep-aaaaaaaaaa", "ep-bbbbbbbbbb")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1: ep-cccccccccc", "sentence 1 ('Pay with the certificate first.') names ep-cccccccccc, which"),
        ("3: ep-aaaaaaaaaa", "names sentence 3; the text has 2"),
        ("1 ep-aaaaaaaaaa", "cannot read"),
        ("1: PB-02", "'PB-02' is not an episode ID"),
        ("1: ep-aaaaaaaaaa; 1: ep-bbbbbbbbbb", "sentence 1 is given twice"),
    ],
)
def test_a_bad_map_is_refused_with_the_sentence_and_a_fix(value: str, says: str) -> None:
    text = RULE.replace("1: ep-aaaaaaaaaa; 2: ep-aaaaaaaaaa, ep-bbbbbbbbbb (model)", value)
    with pytest.raises(ValidationError) as exc:
        pb.parse(text)
    problem = exc.value.problems[0]
    assert says in problem.message and problem.line == 9
    assert problem.hint and "Learnt in" in problem.hint


def test_removing_a_citation_removes_the_sentences_only_it_supported() -> None:
    rule = pb.parse(RULE).rules[0]
    text, sources, cited = ps.uncite(rule.text, rule.sources, rule.episode_ids, ["ep-aaaaaaaaaa"])
    assert text == "Then put the rest on the card."
    assert sources == (Source(1, ("ep-bbbbbbbbbb",), True),)
    assert cited == ("ep-bbbbbbbbbb",)


def test_build_numbers_the_sentences_as_split_reads_them() -> None:
    text, sources = ps.build([("One. Two.", ["ep-aaaaaaaaaa"], False), ("Three", ["ep-bbbbbbbbbb"], False)])
    assert ps.split(text) == ["One.", "Two.", "Three"]
    assert [s.number for s in sources] == [1, 2, 3]


WORD = st.sampled_from(["pay", "card", "e.g.", "x!", "why?", "(model)", "1:", "ep-a", ";", "—", "é"])
EPS = st.lists(st.from_regex(r"\Aep-[0-9a-z]{10}\Z"), min_size=1, max_size=3, unique=True)


@st.composite
def mapped_rules(draw: st.DrawFn) -> pb.Rule:
    cites = draw(EPS)
    parts = [
        (
            " ".join(draw(st.lists(WORD, min_size=1, max_size=6))),
            draw(st.lists(st.sampled_from(cites), max_size=2)),
            draw(st.booleans()),
        )
        for _ in range(draw(st.integers(1, 4)))
    ]
    text, sources = ps.build(parts)
    assume(text.strip())
    try:
        return pb.make_rule("PB-01", "Title", text, ["tag"], cites, sources=sources)
    except ValidationError:
        assume(False)
        raise


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(rule=mapped_rules())
def test_generated_maps_round_trip_byte_for_byte(rule: pb.Rule) -> None:
    text = pb.render(pb.Playbook(rules=(rule,)))
    back = pb.parse(text)
    assert pb.render(back) == text
    assert back.rules[0].sources == rule.sources
    assert [s.episode_ids for s in back.rules[0].said()] == [s.episode_ids for s in rule.said()]


def test_make_rule_refuses_a_map_naming_an_uncited_episode() -> None:
    with pytest.raises(ValidationError, match="does not cite"):
        pb.make_rule("PB-01", "T", "Say it.", [], ["ep-aaaaaaaaaa"], sources=[Source(1, ("ep-bbbbbbbbbb",))])
    rule = pb.make_rule(
        "PB-01", "T", "Say it.", [], ["ep-aaaaaaaaaa"], sources=[Source(1, ("ep-aaaaaaaaaa",))]
    )
    assert dataclasses.replace(rule, sources=()).said()[0].kind == "rule"


def test_rule_add_takes_a_sentence_map(cli, demo_repo) -> None:
    from conftest import git

    text = "Never post discount codes on social media. Send them to the email list."
    cites = "ep-wmjgdnc59j,ep-56m702j8dv"
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    bad = cli("rule", "add", "--text", text, "--cites", cites, "--sentences-from", "1: ep-t54vr0xvc5")
    assert bad.exit_code == 1, bad.output  # a validation error (exit 1): nothing written
    assert "names ep-t54vr0xvc5, which 'Learnt in' does not cite" in bad.output
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    out = cli(
        "rule",
        "add",
        "--text",
        text,
        "--cites",
        cites,
        "--sentences-from",
        "1: ep-wmjgdnc59j; 2: ep-56m702j8dv",
    )
    assert out.exit_code == 0, out.output
    rule = pb.parse(demo_repo.playbook_path.read_text()).get(out.stdout.strip())
    assert [s.episode_ids for s in rule.said()] == [("ep-wmjgdnc59j",), ("ep-56m702j8dv",)]
    assert "- Sentences from: 1: ep-wmjgdnc59j; 2: ep-56m702j8dv" in demo_repo.playbook_path.read_text()
    one = cli("rule", "add", "--text", "Keep codes private. Really.", "--cites", "ep-wmjgdnc59j")
    assert one.exit_code == 0
    single = pb.parse(demo_repo.playbook_path.read_text()).get(one.stdout.strip())
    assert single.sources == () and {s.episode_ids for s in single.said()} == {("ep-wmjgdnc59j",)}
