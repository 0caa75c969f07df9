"""Lineage counts: how each rule has fared since it last changed, recomputed from the ledger."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import git

from scarwarden.distill import distill
from scarwarden.files import playbook as pb
from scarwarden.files.record import add_episodes
from scarwarden.files.rule_dates import last_changes
from scarwarden.index import open_index
from scarwarden.index.lineage import lineage_counts
from scarwarden.recall.engine import recall_task
from scarwarden.recall.explain import explain_data, explain_lines
from scarwarden.recall.router import ACT, ACT_AND_FLAG
from scarwarden.repo import MemoryRepo

TASK = "Draft a LinkedIn post announcing our beta"


def apply(repo: MemoryRepo, rule_id: str, outcomes: list[str], at: str | None = None) -> list[str]:
    """Episodes that applied ``rule_id``: "ok" went well, anything else is a correction."""
    rows: list[dict[str, Any]] = []
    for i, what in enumerate(outcomes):
        row: dict[str, Any] = {"task": TASK, "action": f"Draft {i}", "rules_applied": [rule_id]}
        if what == "ok":
            row.update(outcome="Published as drafted", source="outcome")
        else:
            row.update(correction=what, source="correction")
        if at:
            row["at"] = at
        rows.append(row)
    return [ep.id for ep in add_episodes(repo, rows)]


def counts(repo: MemoryRepo, rule_id: str) -> dict[str, Any]:
    with open_index(repo) as index:
        return lineage_counts(index, [rule_id])[rule_id].to_json()


def head(repo: MemoryRepo) -> str:
    return git(repo.root, "rev-parse", "HEAD").stdout.strip()


def test_counts_since_the_last_change(demo_repo: MemoryRepo, make_cli: Any) -> None:
    demo = counts(demo_repo, "PB-01")  # the demo ledger's own applications
    assert demo["applied"] == 0 and demo["struggling"] is False
    old = apply(demo_repo, "PB-01", ["ok", "Too salesy"], at="2020-01-01T00:00:00Z")  # before the rule
    fixes = apply(demo_repo, "PB-01", ["ok", "Lead with the pain", "ok", "ok", "Shorter hook"])
    data = counts(demo_repo, "PB-01")
    assert (data["applied"], data["went_well"], data["corrected"]) == (5, 3, 2)
    assert (data["applied_total"], data["corrected_total"]) == (
        demo["applied_total"] + 7,
        demo["corrected_total"] + 3,
    )
    assert sorted(data["corrections"]) == sorted(fixes[1::3]) and old[1] not in data["corrections"]
    assert data["struggling"] is False  # 2 of 5: less than half ...
    apply(demo_repo, "PB-01", ["Still too long"])
    assert counts(demo_repo, "PB-01")["struggling"] is True  # ... 3 of 6: half, of at least three
    cli = make_cli(demo_repo.root)
    out = cli("rule", "show", "PB-01")
    assert (
        "PB-01 was applied 6 times and corrected 3 times since it last changed "
        f"({data['last_changed'][:10]}); {demo['applied_total'] + 8} times in all "
        "(as the episodes claim: none carries a recall receipt): proposed for revision"
    ) in out.stdout
    shown = json.loads(cli("rule", "show", "PB-01", "--json").stdout)["lineage"]
    assert shown["applied"] == 6 and shown["corrected"] == 3 and shown["struggling"] is True


def test_a_change_starts_the_count_again_and_a_revert_is_a_change(demo_repo: MemoryRepo) -> None:
    apply(demo_repo, "PB-07", ["Too long", "Too vague", "ok"], at="2030-01-01T00:00:00Z")
    assert counts(demo_repo, "PB-07")["corrected"] == 2
    path = demo_repo.playbook_path
    path.write_text(path.read_text().replace("under 50 characters", "under 45 characters"))
    git(demo_repo.root, "commit", "-q", "-am", "Tighten PB-07")
    changed = head(demo_repo)
    # Episodes dated before the change no longer count; the totals keep them.
    assert last_changes(demo_repo)["PB-07"].commit == changed
    data = counts(demo_repo, "PB-07")
    assert (data["applied"], data["applied_total"]) == (3, 3)  # dated 2030: after the change
    git(demo_repo.root, "revert", "--no-edit", "HEAD")
    assert last_changes(demo_repo)["PB-07"].commit == head(demo_repo)


def test_a_merge_that_changes_the_rule_counts_from_the_merge(demo_repo: MemoryRepo) -> None:
    before = last_changes(demo_repo)["PB-07"].commit
    git(demo_repo.root, "checkout", "-q", "-b", "edit")
    path = demo_repo.playbook_path
    path.write_text(path.read_text().replace("under 50 characters", "under 40 characters"))
    git(demo_repo.root, "commit", "-q", "-am", "Shorter subject lines")
    git(demo_repo.root, "checkout", "-q", "main")
    git(demo_repo.root, "commit", "-q", "--allow-empty", "-m", "elsewhere")
    assert last_changes(demo_repo)["PB-07"].commit == before
    git(demo_repo.root, "merge", "-q", "--no-ff", "-m", "Merge edit", "edit")
    assert last_changes(demo_repo)["PB-07"].commit == head(demo_repo)
    assert last_changes(demo_repo)["PB-01"].commit == before  # untouched rules keep their date


def test_citations_alone_do_not_change_a_rule(demo_repo: MemoryRepo) -> None:
    before = last_changes(demo_repo)["PB-04"].commit
    book = pb.parse(demo_repo.playbook_path.read_text())
    rule = book.get("PB-04")
    assert rule is not None
    updated = pb.make_rule(rule.id, rule.title, rule.text, rule.tags, (*rule.episode_ids, "ep-9ak5fm33w3"))
    demo_repo.playbook_path.write_text(pb.render(book.with_rule(updated)))
    git(demo_repo.root, "commit", "-q", "-am", "cite one more")
    assert last_changes(demo_repo)["PB-04"].commit == before


@pytest.mark.parametrize(
    "outcomes, verdict", [(["ok", "ok", "ok"], ACT), (["Wrong", "ok", "Wrong again"], ACT_AND_FLAG)]
)
def test_the_router_never_acts_on_a_struggling_rule_alone(
    demo_repo: MemoryRepo, outcomes: list[str], verdict: str
) -> None:
    """The same three applications, once went well and once corrected twice: only the
    verdict on the struggling rule changes (so the ledger's words are not the cause)."""
    assert recall_task(demo_repo, TASK, log=False).verdict == ACT
    apply(demo_repo, "PB-01", outcomes)
    result = recall_task(demo_repo, TASK, log=False)
    assert result.rules[0].id == "PB-01" and result.verdict == verdict
    # issue 26: the counts come with the rule, and the explanation says why it flagged
    lineage = result.rules[0].lineage
    assert lineage is not None and lineage["applied"] == 3
    assert lineage["corrected"] == sum(o != "ok" for o in outcomes)
    explained = "\n".join(explain_lines(result))
    assert "lineage: PB-01 applied 3" in explained
    downgraded = "downgraded to ACT_AND_FLAG: PB-01 was applied 3 times" in explained
    assert downgraded == (verdict == ACT_AND_FLAG)
    data = explain_data(result)["router"]["downgraded_by"]
    assert (data is not None) == (verdict == ACT_AND_FLAG)


def test_distill_proposes_a_struggling_rule_for_revision(demo_repo: MemoryRepo) -> None:
    fixes = apply(demo_repo, "PB-07", ["Too long again", "Still too long", "ok"])
    result = distill(demo_repo, offline=True)
    assert [lineage.rule_id for lineage in result.struggling] == ["PB-07"]
    message = git(demo_repo.root, "log", "-1", "--format=%B").stdout
    assert "Proposed for revision or retirement (corrected in at least half of 3+ applications):" in message
    assert "- PB-07 was applied 3 times and corrected 2 times since it last changed" in message
    (line,) = [x for x in message.splitlines() if x.startswith("- PB-07 was applied")]
    assert line.endswith(f"(corrected in {', '.join(sorted(fixes[:2]))})")


def test_mcp_get_rule_shows_the_counts(demo_repo: MemoryRepo) -> None:
    from scarwarden.agents.mcp.tools import MemoryTools

    apply(demo_repo, "PB-02", ["ok", "Never paste the code"])
    lineage = MemoryTools(demo_repo).get_rule("pb-02")["lineage"]
    assert (lineage["applied"], lineage["went_well"], lineage["corrected"]) == (2, 1, 1)
    assert lineage["summary"].startswith("PB-02 was applied 2 times and corrected once since it last changed")


def test_review_warns_of_contradictions_and_shows_the_counts(demo_repo: MemoryRepo) -> None:
    from scarwarden.audit.review.build import build_review

    base = head(demo_repo)
    apply(demo_repo, "PB-07", ["ok"])
    (against,) = add_episodes(
        demo_repo,
        [
            {
                "task": "Newsletter subject",
                "correction": "No concrete benefit in the subject line",
                "source": "correction",
            }
        ],
    )
    book = pb.parse(demo_repo.playbook_path.read_text())
    rule = book.get("PB-07")
    assert rule is not None
    wrong = pb.make_rule(rule.id, rule.title, rule.text, rule.tags, (*rule.episode_ids, against.id))
    demo_repo.playbook_path.write_text(pb.render(book.with_rule(wrong)))
    git(demo_repo.root, "commit", "-q", "-am", "cite it anyway")
    messages = [w.message for w in build_review(demo_repo, base, run_gate=False).warnings]
    assert any(
        m.startswith(
            f"PB-07 is contradicted by {against.id}, which it cites "
            "(a different limit on benefit (1 against 0))"
        )
        for m in messages
    )
    assert any(
        m.startswith("PB-07 was applied once and corrected 0 times since it last changed") for m in messages
    )


def test_review_shows_a_flag_the_distiller_left(memory_repo: MemoryRepo) -> None:
    from scarwarden.audit.review.build import build_review

    rows = [
        {
            "task": "Post",
            "correction": "Use emoji sparingly in LinkedIn posts",
            "tags": ["linkedin", "emoji"],
        },
    ]
    add_episodes(memory_repo, [{**rows[0], "at": "2026-11-01T10:00:00Z", "source": "correction"}])
    distill(memory_repo, offline=True)
    base = head(memory_repo)
    (doubt,) = add_episodes(
        memory_repo,
        [
            {
                "task": "Post",
                "correction": "Never use emoji",
                "tags": ["linkedin", "emoji"],
                "source": "correction",
            }
        ],
    )
    result = distill(memory_repo, offline=True)
    (flag,) = result.contradictions
    messages = [w.message for w in build_review(memory_repo, base, run_gate=False).warnings]
    assert (
        f"{flag.rule} is contradicted by {doubt.id} (opposite polarity on emoji); the distiller could "
        "not decide: revise, supersede or retire the rule, or confirm it"
    ) in (messages)


def test_the_web_rule_page_shows_the_counts(demo_repo: MemoryRepo) -> None:
    flask = pytest.importorskip("flask")
    from scarwarden.audit.web.app import create_app

    assert flask
    apply(demo_repo, "PB-03", ["Wrong queue", "ok", "Wrong priority"])
    app = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"})
    html = app.test_client().get("/rules/PB-03", headers={"Host": "localhost"}).get_data(as_text=True)
    assert "PB-03 was applied 3 times and corrected 2 times since it last changed" in html
    assert 'class="meta lineage notice"' in html  # struggling: shown as a notice
