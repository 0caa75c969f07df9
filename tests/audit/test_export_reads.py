"""``audit --html`` reads once what its pages share (issue 30, 10,000 episodes): the
playbook's history and the counts for every rule page, the citations and the rules for
every episode page. Each page gets what the live UI's read of that one page gives. And
it writes each page over the earlier export's bytes, leaving what ``write_text`` did."""

from __future__ import annotations

import stat
from pathlib import Path

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


def test_a_page_written_over_an_earlier_one_is_the_new_page_alone(
    distilled: Distilled, tmp_path: Path
) -> None:
    """Pages are written over the earlier bytes, not into an emptied file (static_site.
    write_over): a longer or shorter earlier page, a page's mode, a link to a page
    elsewhere end as ``write_text`` left them."""
    from scarwarden.audit.web.static_site import export_html, write_over

    fresh, again = tmp_path / "fresh", tmp_path / "again"
    export_html(distilled.repo, fresh)
    export_html(distilled.repo, again)
    rule, episode = Path("rules/PB-01.html"), Path("episodes") / f"{distilled.emoji.id}.html"
    (again / rule).write_bytes((fresh / rule).read_bytes() * 2)  # longer: cut at the page's end
    (again / episode).write_bytes(b"<html>")  # shorter: all of it written over
    (again / "index.html").chmod(0o600)
    elsewhere = tmp_path / "elsewhere.html"
    elsewhere.write_bytes(b"x" * 100_000)
    (again / "ledger.html").unlink()
    (again / "ledger.html").symlink_to(elsewhere)
    export_html(distilled.repo, again)
    for page in (rule, episode, Path("index.html")):
        assert (again / page).read_bytes() == (fresh / page).read_bytes()
    assert stat.S_IMODE((again / "index.html").stat().st_mode) == 0o600
    assert (again / "ledger.html").is_symlink()
    assert elsewhere.read_bytes() == (fresh / "ledger.html").read_bytes()
    new = tmp_path / "new.html"
    write_over(new, b"page")
    assert new.read_bytes() == b"page"
    assert stat.S_IMODE(new.stat().st_mode) == stat.S_IMODE((fresh / "index.html").stat().st_mode)
