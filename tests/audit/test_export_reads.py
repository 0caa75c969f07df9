"""``audit --html`` reads once what its pages share (issue 30, 10,000 episodes): the
playbook's history and the counts for every rule page. Each page gets what the live
UI's read of that one page gives."""

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
