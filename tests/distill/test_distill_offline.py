"""The offline distiller: deterministic grouping, new rules, updates instead of duplicates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, head
from helpers import minted_rule, new_memory

from scarwarden.distill import NO_KEY_NOTICE, distill
from scarwarden.distill.offline import offline_operations, rule_title
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.files.record import add_episodes
from scarwarden.files.rule_ids import is_minted
from scarwarden.files.scaffold import demo_memory_dir, init
from scarwarden.repo import MemoryRepo, open_repo

WEBINAR = ("ep-9ak5fm33w3", "ep-b9jr19c6sp")
GERMAN = "ep-hm3eyyreap"


def demo_episodes() -> list:
    return [
        parse_episode_bytes(p.read_bytes()) for p in sorted((demo_memory_dir() / "episodes").rglob("*.yaml"))
    ]


def demo_playbook() -> pb.Playbook:
    return pb.parse((demo_memory_dir() / "playbook.md").read_text())


def make_demo(path: Path) -> MemoryRepo:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    init(open_repo(path, initialised=False), demo=True)
    return open_repo(path)


def test_demo_webinar_corrections_become_one_rule(demo_repo: MemoryRepo) -> None:
    result = distill(demo_repo, offline=True)
    assert result.distiller == "offline" and result.notice is None
    assert result.new == sorted([*WEBINAR, GERMAN])
    book = pb.parse(demo_repo.playbook_path.read_text())
    webinar = minted_rule(book, "Webinar invitations must state the timezone")
    assert webinar.episode_ids == WEBINAR
    assert webinar.title == "Webinar invitations must state the timezone"
    assert webinar.text == (
        "Webinar invitations must state the timezone; give the time in UTC plus the two main "
        "customer timezones and link a time converter. Always include the timezone in webinar "
        "times, UTC first."
    )
    # Issue 25: a new rule's tags are its first episode's own (was: the group's most frequent).
    assert webinar.tags == ("webinar", "invitation", "timezone", "email")
    assert [s.episode_ids for s in webinar.said()] == [(WEBINAR[0],), (WEBINAR[1],)]
    german = book.get(result.changes[1].rule_id)
    assert german.episode_ids == (GERMAN,)
    assert german.tags == ("translation", "german", "help-centre", "glossary")
    assert [c.kind for c in result.changes] == ["add", "add"]
    assert result.usage.total_tokens == 0 and result.calls == 0


def test_without_a_key_the_cli_says_so_in_one_line(cli, demo_repo: MemoryRepo) -> None:
    result = cli("distill")
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == NO_KEY_NOTICE
    assert "distill: +2 rules, ~0 updated, -0 retired" in result.stdout
    assert (
        git(
            demo_repo.root, "log", "-1", "--format=%(trailers:key=Scarwarden-Distiller,valueonly)"
        ).stdout.strip()
        == "offline"
    )
    again = cli("distill")
    assert again.exit_code == 0 and again.stderr == ""
    assert again.stdout.startswith("nothing new to distill")


def test_deterministic_across_clones(tmp_path: Path) -> None:
    one, two = make_demo(tmp_path / "one"), make_demo(tmp_path / "two")
    extra = [
        {
            "id": f"ep-extra{i:04d}",
            "at": f"2026-11-2{i}T10:00:00Z",
            "task": f"Write the webinar follow-up email number {i}",
            "correction": "Send the recording link within 24 hours of the webinar",
            "tags": ["webinar", "follow-up", "email"],
            "source": "correction",
        }
        for i in range(3)
    ]
    for repo in (one, two):
        add_episodes(repo, extra)
        distill(repo, offline=True)
    assert one.playbook_path.read_bytes() == two.playbook_path.read_bytes()
    message = [git(r.root, "log", "-1", "--format=%B").stdout for r in (one, two)]
    assert message[0] == message[1]
    # And the library alone, twice, on the same input: identical operations.
    eps, book = demo_episodes(), demo_playbook()
    assert offline_operations(eps, book) == offline_operations(list(reversed(eps)), book)


def test_grouping_by_tags_and_terms(memory_repo: MemoryRepo) -> None:
    add_episodes(
        memory_repo,
        [
            {
                "id": "ep-cap0000001",
                "at": "2026-11-01T09:00:00Z",
                "task": "Publish the product video",
                "correction": "Every video needs burned-in captions, because most viewers watch muted",
                "tags": ["video", "captions", "social"],
                "source": "correction",
            },
            {
                "id": "ep-cap0000002",
                "at": "2026-11-02T09:00:00Z",
                "task": "Post the demo video clip",
                "correction": "Add captions to every video clip before posting; viewers watch muted",
                "tags": ["video", "captions"],
                "source": "correction",
            },
            {
                "id": "ep-inv0000001",
                "at": "2026-11-03T09:00:00Z",
                "task": "Send the invoice reminder",
                "correction": "Invoice reminders go out on the first working day, never at weekends",
                "tags": ["invoice", "reminder", "billing"],
                "source": "correction",
            },
            {
                "id": "ep-vid0000003",
                "at": "2026-11-04T09:00:00Z",
                "task": "Cut the video teaser",
                "correction": "Keep teasers under 30 seconds",
                "tags": ["video", "teaser"],
                "source": "correction",
            },
            {
                "id": "ep-out0000001",
                "at": "2026-11-05T09:00:00Z",
                "task": "Send the newsletter",
                "outcome": "Open rate 31%",
                "tags": ["newsletter"],
                "source": "outcome",
            },
        ],
    )
    result = distill(memory_repo, offline=True)
    book = pb.parse(memory_repo.playbook_path.read_text())
    assert [rule.episode_ids for rule in book.rules] == [
        ("ep-cap0000001", "ep-cap0000002"),
        ("ep-inv0000001",),
        ("ep-vid0000003",),
    ]
    assert all(is_minted(rule.id) for rule in book.rules)
    assert book.rules[0].tags[:2] == ("video", "captions")
    # The outcome-only episode is left for a model, reported, and not marked distilled.
    assert result.left == [
        ("ep-out0000001", "no correction or human answer to learn from; left for a model distillation")
    ]
    message = git(memory_repo.root, "log", "-1", "--format=%B").stdout
    assert "Left for later (not marked distilled):\n- ep-out0000001:" in message
    assert "Scarwarden-Distilled-Episode: ep-out0000001" not in message
    # Next run: only the outcome episode is new, and nothing is committed for it.
    head = git(memory_repo.root, "rev-parse", "HEAD").stdout
    again = distill(memory_repo, offline=True)
    assert again.new == ["ep-out0000001"] and again.commit is None and again.nothing_new
    assert git(memory_repo.root, "rev-parse", "HEAD").stdout == head


def test_updates_an_existing_rule_instead_of_a_duplicate(demo_repo: MemoryRepo) -> None:
    [ep] = add_episodes(
        demo_repo,
        [
            {
                "task": "Write the subject line for the December newsletter",
                "action": "Used a 70-character subject line in all caps",
                "correction": (
                    "Subject lines stay under 50 characters, lead with one concrete benefit, no all-caps"
                ),
                "tags": ["newsletter", "subject-line", "email"],
                "source": "correction",
            }
        ],
    )
    before = pb.parse(demo_repo.playbook_path.read_text()).get("PB-07")
    result = distill(demo_repo, offline=True)
    book = pb.parse(demo_repo.playbook_path.read_text())
    pb07 = book.get("PB-07")
    assert pb07.episode_ids == before.episode_ids + (ep.id,)
    # Issue 25: the correction is kept whole, as a sentence of its own with its own
    # provenance (the reviewed sentences keep theirs: from the rule's citations).
    added = "Subject lines stay under 50 characters, lead with one concrete benefit, no all-caps."
    assert pb07.text == before.text + " " + added
    assert (pb07.title, pb07.tags) == (before.title, before.tags)
    assert [(s.sentence, s.kind) for s in pb07.said()][-1] == (added, "stated")
    assert pb07.said()[-1].episode_ids == (ep.id,)
    assert not any(ep.id in r.episode_ids for r in book.rules if r.id != "PB-07")
    assert [(c.kind, c.rule_id) for c in result.changes] == [
        ("update", "PB-07"),
        ("add", result.changes[1].rule_id),
        ("add", result.changes[2].rule_id),
    ]
    assert all(is_minted(c.rule_id) for c in result.changes[1:])
    message = git(demo_repo.root, "log", "-1", "--format=%B").stdout
    assert message.startswith("distill: +2 rules, ~1 updated, -0 retired")
    assert (
        "Updated PB-07: Keep newsletter subject lines short and concrete "
        "(text changed, sentence map changed)" in message
    )


def test_redistilling_the_demo_ledger_finds_its_own_rules() -> None:
    """Every cited episode, distilled again against the demo playbook, updates the rule
    that cites it: no near-duplicates. From an empty playbook the groups are the rules'."""
    eps, book = demo_episodes(), demo_playbook()
    cited_by = {ep: rule.id for rule in book.rules for ep in rule.episode_ids}
    plan = offline_operations(eps, book)
    updates = [op for op in plan.operations if op.kind == "update"]
    # Re-derived for issue 25: 14 rules are updated (was 15): where a rule's hand-written
    # wording shares less than half of a correction's weighted words, tags no longer
    # pull the correction in, and it becomes a rule of its own; never a citation of
    # another rule's episodes.
    assert len(updates) == 14
    for op in updates:
        assert {cited_by[ep] for ep in op.episode_ids} == {op.rule_id}
    adds = [op.episode_ids for op in plan.operations if op.kind == "add"]
    assert (GERMAN,) in adds and WEBINAR in adds


@pytest.mark.parametrize(
    "text, title",
    [
        (
            "Webinar invitations must state the timezone; give the time in UTC",
            "Webinar invitations must state the timezone",
        ),
        (
            "Any billing dispute or double charge is high priority and gets a human reply within four hours",
            "Any billing dispute or double charge is high priority",
        ),
        ("keep it short.", "Keep it short"),
    ],
)
def test_titles_from_the_first_clause(text: str, title: str) -> None:
    assert rule_title(text) == title


def test_json_output_of_an_offline_dry_run(cli, demo_repo: MemoryRepo) -> None:
    result = cli("distill", "--offline", "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["distiller"] == "offline" and data["model"] is None
    assert data["subject"] == "distill: +2 rules, ~0 updated, -0 retired"
    assert data["distilled_episodes"] == sorted([*WEBINAR, GERMAN])
    assert data["changes"][0] == {
        "op": "add",
        "rule_id": data["changes"][0]["rule_id"],
        "title": "Webinar invitations must state the timezone",
        "episode_ids": list(WEBINAR),
        "detail": "",
        "before": None,
        "after": None,
        "lessons": [
            {
                "episode_id": WEBINAR[0],
                "lesson": "Webinar invitations must state the timezone; give the time in UTC plus the two "
                "main customer timezones and link a time converter.",
            },
            {"episode_id": WEBINAR[1], "lesson": "Always include the timezone in webinar times, UTC first."},
        ],
        "replaced_by": None,
    }
    assert data["contradictions"] == [] and data["no_lesson"] == []
    assert data["usage"] == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "estimated": False,
        "calls": 0,
    }
    assert set(data) >= {"new_episodes", "left", "dropped", "message", "diff", "commit", "branch"}
    assert result.stderr == ""  # --offline: no "no key" notice


def test_a_key_that_names_no_server_is_not_reported_as_missing(cli, demo_repo: MemoryRepo) -> None:
    """SCARWARDEN_API_KEY alone is sent nowhere (issue 28); the notice used to tell a
    newcomer who had set it to set it: 'no API key configured (SCARWARDEN_API_KEY or
    DASHSCOPE_API_KEY)'."""
    stray = cli("distill", "--dry-run", env={"SCARWARDEN_API_KEY": "sk-general"})
    assert stray.exit_code == 0, stray.output
    assert "SCARWARDEN_API_KEY is set, but no provider or base URL" in stray.stderr
    assert "using the offline distiller" in stray.stderr and "sk-general" not in stray.output
    plain = cli("distill", "--dry-run")
    assert "DASHSCOPE_API_KEY" in plain.stderr
    assert "SCARWARDEN_API_KEY once a provider or base URL is set" in plain.stderr


def test_distill_on_an_empty_ledger_says_to_record_an_episode_first(tmp_path) -> None:
    """A newcomer's first distill, before any episode, said 'every episode in the ledger
    is distilled already': true of no episodes, and no word on what to do next."""
    root, cli = new_memory(tmp_path)
    before = head(root)
    for args in (("distill",), ("distill", "--dry-run")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
        assert "nothing to distill: the ledger has no episodes yet" in result.output
        assert 'scarwarden episode add --task "..." --correction "..."' in result.output
        assert "distilled already" not in result.output
    assert head(root) == before
