"""Rule IDs that never collide (issue 15): the minted form next to ``PB-NN`` everywhere."""

from __future__ import annotations

import pytest
from helpers import minted_rule

from scarwarden.answers.citations import parse_citations
from scarwarden.audit.web.render import Links, linkify
from scarwarden.files import playbook as pb
from scarwarden.files.episode_fields import RULE_ID_RE
from scarwarden.files.rule_ids import canonical, is_minted, mint_rule_id, rule_content, sort_key


@pytest.mark.parametrize("rule_id", ["PB-01", "PB-123", "PB-7k2m9q4x", "PB-0000000a", "PB-12345678"])
def test_both_forms_are_rule_ids(rule_id: str) -> None:
    assert RULE_ID_RE.match(rule_id)


@pytest.mark.parametrize(
    "text",
    ["PB-1", "PB-7K2M9Q4X", "PB-7k2m9q4", "PB-7k2m9q4xz", "PB-7k2m9q4i", "PB-7k2m9q4u", "PB-01\n", "pb-01"],
)
def test_other_spellings_are_not(text: str) -> None:
    assert not RULE_ID_RE.match(text)


def test_minted_ids_hash_the_content_and_are_never_reused() -> None:
    content = rule_content("Title", "Text.", ["a"], ["ep-aaaaaaaaaa"])
    first = mint_rule_id(set(), content)
    assert RULE_ID_RE.match(first) and is_minted(first)
    assert mint_rule_id(set(), content) == first  # deterministic: clones agree
    other = mint_rule_id(set(), rule_content("Title", "Text!", ["a"], ["ep-aaaaaaaaaa"]))
    assert other != first
    salted = mint_rule_id({first}, content)
    assert salted != first and RULE_ID_RE.match(salted)


def test_random_minting_never_gives_digits_only_or_a_taken_id() -> None:
    seen = {mint_rule_id() for _ in range(2000)}
    assert len(seen) == 2000
    assert all(is_minted(rule_id) and RULE_ID_RE.match(rule_id) for rule_id in seen)


def test_the_playbook_parses_renders_and_sorts_both_forms() -> None:
    book = pb.Playbook()
    old = pb.make_rule(book.next_id(), "Old", "Old form.", ["a"], ["ep-aaaaaaaaaa"])
    book = book.with_rule(old)
    new = book.minted(pb.make_rule("PB-00", "New", "New form.", ["b"], ["ep-bbbbbbbbbb"]))
    book = book.with_rule(new).with_retired("PB-01", "superseded", new.id)
    text = pb.render(book)
    assert f"## {new.id}: New\n" in text and f"- Replaced by: {new.id}\n" in text
    again = pb.parse(text)
    assert pb.render(again) == text
    assert minted_rule(again, "New") == new
    assert again.next_id() == "PB-02"  # the sequential counter ignores minted IDs
    assert sorted([new.id, "PB-10", "PB-02"], key=sort_key) == ["PB-02", "PB-10", new.id]


def test_citations_and_links_accept_the_minted_form() -> None:
    cites = parse_citations("Do it [PB-7K2M9Q4X, learnt in ep-aaaaaaaaaa] and [pb-3, learnt in ep-b].")
    assert [c.rule_id for c in cites] == ["PB-7k2m9q4x", "PB-03"]
    assert canonical(" pb-7K2M9Q4X ") == "PB-7k2m9q4x" and canonical("nope") == "NOPE"
    html = str(linkify("see PB-7k2m9q4x and PB-01", Links()))
    assert 'href="/rules/PB-7k2m9q4x"' in html and 'href="/rules/PB-01"' in html
