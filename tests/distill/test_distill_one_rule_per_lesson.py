"""One rule per lesson (issue 25): the issue's bad inputs for the offline distiller."""

from __future__ import annotations

import pytest
from conftest import git

from scarwarden.distill import distill
from scarwarden.files import claims
from scarwarden.files import playbook as pb
from scarwarden.files.record import add_episodes
from scarwarden.gate.check import check_all
from scarwarden.repo import MemoryRepo


def record(repo: MemoryRepo, *corrections: str, tags: tuple[str, ...] = ("airline",)) -> list[str]:
    rows = [
        {
            "at": f"2026-11-{i + 1:02d}T10:00:00Z",
            "task": "Help the customer with the booking",
            "correction": correction,
            "tags": list(tags),
            "source": "correction",
        }
        for i, correction in enumerate(corrections)
    ]
    return [ep.id for ep in add_episodes(repo, rows)]


def book(repo: MemoryRepo) -> pb.Playbook:
    return pb.parse(repo.playbook_path.read_text())


def test_a_correction_of_only_identifiers_and_numbers_teaches_nothing(memory_repo: MemoryRepo) -> None:
    (ep,) = record(memory_repo, "Z7GOZK 2024-05-27 $249 HAT078 1")
    result = distill(memory_repo, offline=True)
    assert result.no_lesson == [(ep, "no lesson: the correction holds only identifiers and numbers")]
    assert book(memory_repo).rules == ()
    assert (ep, "left out: no lesson: the correction holds only identifiers and numbers") in result.accounts
    body = git(memory_repo.root, "log", "-1", "--format=%B").stdout
    assert "Episodes with a correction: 0 cited by an active rule, 1 left out:" in body


def test_a_5000_word_correction_is_kept_in_whole_sentences(memory_repo: MemoryRepo) -> None:
    topics = ["refunds", "baggage", "seats", "meals", "upgrades", "pets", "visas", "insurance"]
    sentences = [
        f"Lesson {i}: always check the {topics[i % 8]} rule {i} before answering about {topics[i % 8]}."
        for i in range(480)
    ]
    (ep,) = record(memory_repo, " ".join(sentences))
    assert len(" ".join(sentences).split()) > 5000
    result = distill(memory_repo, offline=True)
    rules = book(memory_repo).rules
    said = [s.sentence for r in rules for s in r.said()]
    assert set(said) <= set(sentences)  # every sentence kept whole, never cut
    # The 480 sentences teach 8 lessons (numbers masked): one sentence each, none lost.
    assert sorted(s.split(" about ")[1] for s in said) == sorted(f"{t}." for t in topics)
    assert all(r.episode_ids == (ep,) for r in rules) and result.contradictions == []
    assert all(len(r.text) // 4 <= 150 or len(r.said()) == 1 for r in rules)
    assert check_all(memory_repo.root).ok


def test_two_corrections_identical_but_for_an_identifier(memory_repo: MemoryRepo) -> None:
    """The same words (a task corrected twice) are one sentence citing both episodes;
    the same lesson about another object is a rule of its own, citing its own episode
    (issue 26: merged, one reservation's lesson was titled, ranked and cited as
    another's). Neither is lost as "already said": the identifier is what the next
    agent needs."""
    same = "Call cancel_reservation on reservation Z7GOZK when the flight was cancelled by the airline."
    other = "Call cancel_reservation on reservation EQ1G6C when the flight was cancelled by the airline."
    a, b, c = record(memory_repo, same, same, other)
    distill(memory_repo, offline=True)
    first, second = book(memory_repo).rules
    assert first.episode_ids == (a, b) and second.episode_ids == (c,)
    assert [(s.sentence, s.episode_ids) for s in first.said()] == [(same, (a, b))]
    assert [(s.sentence, s.episode_ids) for s in second.said()] == [(other, (c,))]
    assert "Z7GOZK" in first.title and "EQ1G6C" in second.title


def test_another_users_lesson_never_joins_a_rule_about_someone_else(memory_repo: MemoryRepo) -> None:
    """Issue 26's replay: "Do not cancel UDMOP1" went into a rule about XEWRD9 (the same
    masked words), so the rule the repeat found named another reservation. Each
    object's lesson is its own rule, across distillations too."""
    (a,) = record(memory_repo, "Do not call cancel_reservation on reservation XEWRD9: refuse the request.")
    distill(memory_repo, offline=True)
    (b,) = record(memory_repo, "Do not call cancel_reservation on reservation UDMOP1: refuse the request.")
    distill(memory_repo, offline=True)
    first, second = book(memory_repo).rules
    assert [(r.episode_ids, len(r.said())) for r in (first, second)] == [((a,), 1), ((b,), 1)]
    assert "UDMOP1" in second.text and "XEWRD9" not in second.text
    assert check_all(memory_repo.root).ok


def test_one_corrections_objects_stay_one_rule_and_a_later_lesson_on_them_joins_it(
    memory_repo: MemoryRepo,
) -> None:
    """One correction is one case (a user's two reservations): one rule. A later
    correction about one of its objects adds its sentence there; a third object's goes
    to a rule of its own."""
    a, b, c = record(
        memory_repo,
        "Do not call cancel_reservation on reservation UDMOP1: refuse the request."
        " Do not call cancel_reservation on reservation 4XGCCM: refuse the request too.",
        "Do not call cancel_reservation on reservation 4XGCCM unless it is insured.",
        "Do not call cancel_reservation on reservation H8Q05L unless it is insured.",
    )
    distill(memory_repo, offline=True)
    case, other = book(memory_repo).rules
    assert case.episode_ids == (a, b) and [s.episode_ids for s in case.said()] == [(a,), (a,), (b,)]
    assert other.episode_ids == (c,) and "H8Q05L" in other.text and "H8Q05L" not in case.text


def test_a_lesson_with_no_identifier_still_joins_its_topic(memory_repo: MemoryRepo) -> None:
    """The object guard is about identifiers only: general lessons group by topic."""
    a, b = record(
        memory_repo,
        "Refund the certificate to the original payment method within seven days.",
        "Refund the certificate to the original payment method, and tell the customer first.",
    )
    distill(memory_repo, offline=True)
    (rule,) = book(memory_repo).rules
    assert rule.episode_ids == (a, b) and len(rule.said()) == 2


def test_the_same_instruction_on_different_objects_is_no_contradiction(memory_repo: MemoryRepo) -> None:
    a, b = record(
        memory_repo,
        "Do not call update_reservation_flights on reservation XEWRD9; refuse the request.",
        "Call update_reservation_flights on reservation OBUT9V; the run left this write out.",
    )
    result = distill(memory_repo, offline=True)
    assert result.contradictions == []
    cited = {ep for rule in book(memory_repo).rules for ep in rule.episode_ids}
    assert cited == {a, b}
    assert (
        claims.contradiction(
            "Set nonfree_baggages to 0 instead of 1.",
            "Set payment_id to gift_card_6276644 instead of credit_card_9879898.",
        )
        is None
    )  # numbers inside identifiers are never limits


def test_a_real_reversal_on_the_same_object_is_decided_and_both_are_cited(memory_repo: MemoryRepo) -> None:
    a, b = record(
        memory_repo,
        "Always cancel reservation Z7GOZK when the customer asks.",
        "Never cancel reservation Z7GOZK when the customer asks.",
    )
    result = distill(memory_repo, offline=True)
    (rule,) = book(memory_repo).rules
    assert rule.text == "Never cancel reservation Z7GOZK when the customer asks."
    assert rule.episode_ids == (a, b)
    (flag,) = result.contradictions
    assert flag.decided and flag.episode_id == b and f"reverses {a}" in flag.reason


def test_a_later_episode_adds_its_citation_and_a_new_one_its_own_sentence(memory_repo: MemoryRepo) -> None:
    (a,) = record(memory_repo, "Refund the certificate to the original payment method within seven days.")
    distill(memory_repo, offline=True)
    (rule,) = book(memory_repo).rules
    (b,) = record(memory_repo, "Refund the certificate to the original payment method within seven days!")
    distill(memory_repo, offline=True)
    (c,) = record(
        memory_repo, "Tell the customer the certificate refund takes seven days to reach the payment method."
    )
    distill(memory_repo, offline=True)
    (after,) = book(memory_repo).rules
    assert after.id == rule.id and after.episode_ids == (a, b, c)
    assert [s.episode_ids for s in after.said()] == [(a, b), (c,)]
    assert check_all(memory_repo.root).ok


def test_ask_words_are_not_tags(memory_repo: MemoryRepo) -> None:
    """Issue 28 point 6: tags only from the episodes' own tags, never every task word."""
    rows = [
        {
            "at": "2026-11-01T10:00:00Z",
            "task": "Book travel for the offsite",
            "correction": "Use the travel desk for group bookings over ten people.",
            "source": "human-answer",
        }
    ]
    add_episodes(memory_repo, rows)
    distill(memory_repo, offline=True)
    (rule,) = book(memory_repo).rules
    assert rule.tags == ()


def test_distill_migrate_maps_an_older_playbook(cli, demo_repo: MemoryRepo) -> None:
    before = pb.parse(demo_repo.playbook_path.read_text())
    assert all(not r.sources for r in before.rules)
    out = cli("distill", "--migrate")
    assert out.exit_code == 0, out.output
    assert "PB-01: 2 sentences mapped, 0 left from the rule's citations" in out.stdout
    after = pb.parse(demo_repo.playbook_path.read_text())
    for old, new in zip(before.rules, after.rules, strict=True):
        assert (new.text, new.episode_ids, new.tags) == (old.text, old.episode_ids, old.tags)
    pb01 = after.get("PB-01")
    assert pb01 is not None and [s.kind for s in pb01.said()] == ["stated", "stated"]
    subject = git(demo_repo.root, "log", "-1", "--format=%s").stdout.strip()
    assert subject.startswith("playbook: sentence maps for ")
    assert check_all(demo_repo.root).ok
    again = cli("distill", "--migrate")
    assert again.exit_code == 0 and "no rule to migrate" in again.stdout


@pytest.mark.parametrize("where", [("--branch", "maps"), ("--no-commit",)])
def test_distill_migrate_refuses_a_place_it_cannot_commit_to(cli, demo_repo: MemoryRepo, where) -> None:
    """--migrate ignored --branch and --no-commit: asked for a branch (or no commit), the
    user got a commit on the current branch. Refused now, exit 2, nothing written."""
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    playbook = demo_repo.playbook_path.read_bytes()
    out = cli("distill", "--migrate", *where)
    assert out.exit_code == 2, out.output
    assert f"--migrate cannot be combined with {where[0]}" in out.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    assert demo_repo.playbook_path.read_bytes() == playbook
    assert git(demo_repo.root, "branch", "--list", "maps").stdout == ""


def test_distill_migrate_refuses_to_sweep_in_an_uncommitted_edit(cli, demo_repo: MemoryRepo) -> None:
    """An uncommitted hand edit of a rule went into the 'playbook: sentence maps' commit,
    unannounced (no gate ran without the hook). Refused now, the edit left as it was."""
    path = demo_repo.playbook_path
    path.write_text(path.read_text().replace("Use one emoji at most", "Use three emoji at least"))
    edited = path.read_bytes()
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    out = cli("distill", "--migrate")
    assert out.exit_code == 2, out.output
    assert "memory/playbook.md has uncommitted changes" in out.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head and path.read_bytes() == edited
    assert "PB-01: 2 sentences mapped" in cli("distill", "--migrate", "--dry-run").stdout
