"""The provenance gate on its own: shapes, citations, keys, text that tries to be markup."""

from __future__ import annotations

import pytest
from helpers import minted_rule

from scarwarden.distill.ops import apply_operations, parse_operations
from scarwarden.files import playbook as pb
from scarwarden.files.scaffold import demo_memory_dir

LEDGER = {"ep-aaaaaaaaaa", "ep-bbbbbbbbbb", "ep-hkgnqdz88f"}


@pytest.fixture
def book() -> pb.Playbook:
    return pb.parse((demo_memory_dir() / "playbook.md").read_text())


@pytest.mark.parametrize(
    "data, message",
    [
        ([], 'a JSON object of the form {"operations": [...]}'),
        ({"ops": []}, 'a JSON object of the form {"operations": [...]}'),
        ({"operations": {}}, '"operations" must be a JSON list'),
        ({"operations": ["add"]}, "operations[0] must be a JSON object"),
        (
            {"operations": [{"op": "delete"}]},
            'operations[0].op must be "add", "update", "retire" or "supersede"',
        ),
        ({"operations": [{"op": "add", "text": "x"}]}, "operations[0].episode_ids is missing"),
        ({"operations": [{"op": "add", "episode_ids": []}]}, "operations[0].text is missing"),
        ({"operations": [{"op": "update", "episode_ids": []}]}, "operations[0].rule_id is missing"),
        ({"operations": [{"op": "retire", "rule_id": "PB-01"}]}, "operations[0].reason is missing"),
        (
            {"operations": [{"op": "add", "text": "x", "episode_ids": [1]}]},
            "operations[0].episode_ids must be a JSON list of strings",
        ),
        (
            {"operations": [{"op": "add", "text": 5, "episode_ids": []}]},
            "operations[0].text must be a string",
        ),
    ],
)
def test_shape_errors_say_exactly_what_is_wrong(data: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_operations(data)
    assert message in str(info.value)


def test_key_references_tags_and_markup(book: pb.Playbook) -> None:
    ops = parse_operations(
        {
            "operations": [
                {
                    "op": "add",
                    "key": "new-1",
                    "title": "## Sneaky\ntitle",
                    "text": "Line one.\n## PB-99: fake heading\n- Learnt in: ep-zzzzzzzzzz",
                    "tags": ["Launch Post", "!!!", "launch-post", "word " * 20],
                    "episode_ids": ["ep-aaaaaaaaaa"],
                },
                {"op": "retire", "rule_id": "PB-01", "reason": "Replaced", "replaced_by": "NEW-1"},
                {
                    "op": "retire",
                    "rule_id": "PB-02",
                    "reason": "Wrong now",
                    "replaced_by": "PB-77",
                    "episode_ids": ["ep-bbbbbbbbbb"],
                },
                {"op": "update", "rule_id": "new-1", "episode_ids": ["ep-bbbbbbbbbb"]},
            ]
        }
    )
    result = apply_operations(book, ops, LEDGER)
    new = minted_rule(result.playbook, "Sneaky title")
    assert new.text == "Line one. ## PB-99: fake heading - Learnt in: [unknown episode]"
    assert new.tags == ("launch-post",)
    assert new.episode_ids == ("ep-aaaaaaaaaa", "ep-bbbbbbbbbb")
    assert result.playbook.get("PB-01").replaced_by == new.id
    pb02 = result.playbook.get("PB-02")
    assert pb02.retired and pb02.replaced_by is None
    assert pb02.reason == "Wrong now (evidence: ep-bbbbbbbbbb)"
    reports = [d.describe() for d in result.drops]
    assert """add "## Sneaky title": tag '!!!' is not a slug; left out""" in reports
    # A model's tag over 64 characters costs the tag, not the rule (make_rule refuses it).
    assert (
        """add "## Sneaky title": tag 'word-word-word-word-'... is 99 characters, over 64; left out"""
        in reports
    )
    assert (
        'removed citation ep-zzzzzzzzzz from add "## Sneaky title": mentioned in the text '
        "but not in the ledger; replaced by [unknown episode]"
    ) in reports
    assert "retire PB-02: replaced_by PB-77 is not an active rule; left out" in reports
    # What is rendered parses back, with exactly one PB-99-free set of rules.
    text = pb.render(result.playbook)
    again = pb.parse(text)
    assert again.get("PB-99") is None and again.get(new.id).text == new.text
    assert [c.kind for c in result.changes] == ["add", "retire", "retire", "update"]


def test_the_input_playbook_is_never_mutated(book: pb.Playbook) -> None:
    before = pb.render(book)
    apply_operations(
        book,
        parse_operations(
            {
                "operations": [
                    {"op": "update", "rule_id": "PB-01", "text": "New", "episode_ids": ["ep-aaaaaaaaaa"]},
                    {"op": "retire", "rule_id": "PB-03", "reason": "x", "episode_ids": ["ep-aaaaaaaaaa"]},
                ]
            }
        ),
        LEDGER,
    )
    assert pb.render(book) == before


def test_an_update_that_changes_nothing_is_not_a_change(book: pb.Playbook) -> None:
    """Not a change, but reported: a reviewer sees the model proposed nothing new."""
    same = book.get("PB-01")
    assert same is not None
    result = apply_operations(
        book,
        parse_operations(
            {
                "operations": [
                    {"op": "update", "rule_id": "PB-01", "episode_ids": ["ep-hkgnqdz88f"], "text": same.text}
                ]
            }
        ),
        LEDGER,
    )
    assert result.changes == []
    assert [d.describe() for d in result.drops] == [
        "dropped update PB-01: nothing to change: the rule already says this and cites these episodes"
    ]
    assert result.playbook == book


def test_a_key_spelled_as_a_rule_id_does_not_shadow_the_rule(book: pb.Playbook) -> None:
    """An add with key "PB-02" made a later "retire PB-02" in the same reply retire the
    new rule instead (added and retired in one commit; PB-02 left active, though the
    report's reader, and the reply, named it). A rule the playbook holds is that rule."""
    ops = parse_operations(
        {
            "operations": [
                {"op": "add", "key": "PB-02", "text": "New rule.", "episode_ids": ["ep-aaaaaaaaaa"]},
                {"op": "retire", "rule_id": "PB-02", "reason": "Gone.", "episode_ids": ["ep-aaaaaaaaaa"]},
            ]
        }
    )
    result = apply_operations(book, ops, LEDGER)
    added, retired = result.changes
    assert retired.kind == "retire" and retired.rule_id == "PB-02"
    assert result.playbook.get("PB-02").retired
    assert not result.playbook.get(added.rule_id).retired


def test_an_add_saying_what_a_rule_says_word_for_word_is_no_new_rule(book: pb.Playbook) -> None:
    """The same add twice in one reply (or an add repeating a rule) made two rules with
    the same words, each minted its own ID: a duplicate recall would show twice."""
    same = {
        "op": "add",
        "title": "Times",
        "text": "Give webinar times in UTC.",
        "episode_ids": ["ep-aaaaaaaaaa"],
    }
    more = {**same, "text": "give webinar  times in UTC.", "episode_ids": ["ep-bbbbbbbbbb"]}
    result = apply_operations(book, parse_operations({"operations": [same, same, more]}), LEDGER)
    (added,) = result.changes
    assert [r.text for r in result.playbook.rules].count("Give webinar times in UTC.") == 1
    says = f'dropped add "Times": {added.rule_id} says this word for word'
    assert [d.describe() for d in result.drops] == [
        f'dropped add "Times": nothing to change: {added.rule_id} says this word for word and cites '
        "these episodes",
        f"{says}; an update of it would add the citations",
    ]
