"""``audit --html`` reads once what its pages share (issue 30, 10,000 episodes): the
playbook's history and the counts for every rule page, the citations and the rules for
every episode page. Each page gets what the live UI's read of that one page gives."""

from __future__ import annotations

import pytest
from distilled_repo import Distilled

from scarwarden import git
from scarwarden.index import open_index

pytest.importorskip("jinja2")


def test_the_shared_reads_give_each_rule_page_its_own(distilled: Distilled) -> None:
    from scarwarden.audit.web import pages

    repo = distilled.repo
    with open_index(repo) as index:
        sources = pages.rule_sources(repo, index)
        rules = index.rules(include_retired=True)
        shared = {r.id: pages.rule_page(repo, index, r.id, sources=sources) for r in rules}
        for rule in rules:
            assert shared[rule.id] == pages.rule_page(repo, index, rule.id)
    events = [ev for page in shared.values() if page for ev, _ in page["history"]]
    assert {ev.kind for ev in events} == {"introduced", "changed", "retired"}  # the distill's three
    for ev in events:  # each commit's trailers asked of git once, the same for every rule
        assert ev.trailers == git.trailers(repo.root, ev.sha)
    assert any(ev.trailers for ev in events)


def test_the_shared_reads_give_each_episode_page_its_own(distilled: Distilled, make_cli) -> None:  # type: ignore[no-untyped-def]
    from scarwarden.audit.web import pages

    both = (distilled.emoji.id, distilled.outage.id)  # each cited by a second rule too
    added = make_cli(distilled.repo.root)("rule", "add", "--text", "Check twice.", "--cites", ",".join(both))
    assert added.exit_code == 0, added.output
    with open_index(distilled.repo) as index:
        episodes = index.list_episodes(newest_first=True)
        shared = list(pages.episode_pages(index, episodes))
        assert [ep.id for ep, _ in shared] == [ep.id for ep in episodes]
        for ep, page in shared:
            assert page == pages.episode_page(index, ep.id)
        cited = {ep.id: index.rules_citing(ep.id) for ep in episodes if index.rules_citing(ep.id)}
        assert index.citations() == cited
        some = [ep.id for ep in episodes[::3]] + ["ep-notthere00"]
        assert index.citations(some) == {i: cited[i] for i in some if i in cited}
    assert sum(1 for _, page in shared if page["citing"]) > 10
    assert all(len(page["citing"]) == 2 for ep, page in shared if ep.id in both)
