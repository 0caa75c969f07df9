"""`scarwarden diff`: the semantic playbook diff, on real histories, and git's textconv."""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import git
from distilled_repo import (
    DISTILL_SUBJECT,
    NEW_PB01_TEXT,
    RETIRE_REASON,
    Distilled,
)

from scarwarden.audit.diff.compare import DELETE, EQUAL, INSERT, Segment, word_diff
from scarwarden.audit.diff.render import render_textconv
from scarwarden.files.playbook_edit import load_playbook, save_playbook
from scarwarden.repo import MemoryRepo


def test_word_diff_folds_phrases_and_keeps_equal_text() -> None:
    segs = word_diff("Use one emoji at most and put", "Use no emoji and put")
    assert segs == [
        Segment(EQUAL, "Use "),
        Segment(DELETE, "one"),
        Segment(INSERT, "no"),
        Segment(EQUAL, " emoji"),
        Segment(DELETE, " at most"),
        Segment(EQUAL, " and put"),
    ]
    # Replacing several adjacent words reads as one deletion and one insertion.
    assert word_diff("a b c d", "a x y d") == [
        Segment(EQUAL, "a "),
        Segment(DELETE, "b c"),
        Segment(INSERT, "x y"),
        Segment(EQUAL, " d"),
    ]
    assert word_diff("same", "same") == [Segment(EQUAL, "same")]


def test_default_is_the_last_distill_commit(distilled: Distilled, make_cli) -> None:
    result = make_cli(distilled.repo.root)("diff")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\x1b[" not in out  # not a terminal: no colour
    lines = out.splitlines()
    assert lines[0] == (
        f"Playbook: {distilled.distill[:10]}^ (before distill commit {distilled.distill[:10]}) -> HEAD"
    )
    assert lines[1] == "1 added, 1 changed, 1 retired"
    assert "~ PB-01: Lead LinkedIn posts with the reader's pain  (changed)" in lines
    assert (
        "    text: Open every LinkedIn post, beta or launch announcement with the pain the "
        "reader already feels, then introduce the product, never with a feature list. "
        "Use [-one-]{+no+} emoji[- at most-] and put the hashtags at the end of the post."
    ) in lines
    assert "    tags: +emoji -hook" in lines
    assert f"    learnt in: +{distilled.emoji.id} +{distilled.script.id} -ep-72r3dswafq" in lines
    assert "- PB-04: Route outage reports to the on-call engineer  (retired)" in lines
    assert f"    retired: {RETIRE_REASON}" in lines
    assert "    replaced by: PB-15" in lines
    assert "+ PB-15: Page on-call through the incident channel for outages  (added)" in lines
    assert f"    learnt in: {distilled.outage.id}" in lines
    # Newly cited episodes are quoted, word for word.
    tail = out.split("Newly cited episodes\n", 1)[1]
    assert f"  {distilled.emoji.id}  (2026-11-20, agent writer, corrected_by maya)" in tail
    assert ("    correction: No emoji at all in LinkedIn posts: the audience reads them as unserious") in tail
    assert "    correction: Page on-call through the incident channel; email is never a page" in tail
    assert "ep-72r3dswafq" not in tail  # removed, not newly cited


def test_json_is_complete_and_stable(distilled: Distilled, make_cli) -> None:
    data = json.loads(make_cli(distilled.repo.root)("diff", "--json").stdout)
    assert set(data) == {"from", "to", "summary", "rules", "new_citations"}
    assert data["from"]["rev"] == distilled.base and data["to"]["rev"] == distilled.distill
    assert data["summary"] == {"added": 1, "changed": 1, "retired": 1, "restored": 0, "removed": 0}
    rules = {r["id"]: r for r in data["rules"]}
    assert list(rules) == ["PB-01", "PB-04", "PB-15"]
    pb01 = rules["PB-01"]
    assert pb01["change"] == "changed"
    assert pb01["after"]["text"] == NEW_PB01_TEXT
    assert pb01["tags_added"] == ["emoji"] and pb01["tags_removed"] == ["hook"]
    assert pb01["citations_added"] == [distilled.emoji.id, distilled.script.id]
    assert pb01["citations_removed"] == ["ep-72r3dswafq"]
    assert pb01["title_diff"] is None
    assert {"op": "delete", "text": "one"} in pb01["text_diff"]
    assert {"op": "insert", "text": "no"} in pb01["text_diff"]
    assert rules["PB-04"]["after"]["retired"] is True
    assert rules["PB-04"]["after"]["reason"] == RETIRE_REASON
    assert rules["PB-15"]["change"] == "added" and rules["PB-15"]["before"] is None
    cited = {c["id"]: c for c in data["new_citations"]}
    assert list(cited) == [distilled.emoji.id, distilled.script.id, distilled.outage.id]
    assert all(c["found"] for c in cited.values())
    assert cited[distilled.outage.id]["episode"]["corrected_by"] == "lee"


def test_uncommitted_edit_is_head_vs_working_tree(distilled: Distilled, make_cli) -> None:
    repo = distilled.repo
    book = load_playbook(repo)
    pb02 = book.get("PB-02")
    assert pb02 is not None
    save_playbook(repo, book.with_rule(replace(pb02, title="Never share discount codes publicly")))
    out = make_cli(repo.root)("diff").stdout
    assert out.splitlines()[:2] == ["Playbook: HEAD -> working tree", "1 changed"]
    assert ("~ PB-02: Never share discount codes [-on public social media-]{+publicly+}  (changed)") in out
    # Staged counts too: HEAD vs the working tree still shows it.
    git(repo.root, "add", repo.playbook_rel)
    assert "PB-02" in make_cli(repo.root)("diff").stdout


def test_explicit_revisions(distilled: Distilled, make_cli) -> None:
    cli = make_cli(distilled.repo.root)
    data = json.loads(cli("diff", distilled.init, "HEAD", "--json").stdout)
    assert data["summary"]["added"] == 1 and data["from"]["label"] == distilled.init
    # One revision: against the working tree (clean here, so nothing).
    out = cli("diff", "HEAD").stdout
    assert out == "Playbook: HEAD -> working tree\nno rule changed\n"
    # Reversed: the retirement reads as a restore, the new rule as deleted.
    back = json.loads(cli("diff", "HEAD", distilled.base, "--json").stdout)
    assert back["summary"] == {"added": 0, "changed": 1, "retired": 0, "restored": 1, "removed": 1}
    bad = cli("diff", "no-such-branch")
    assert bad.exit_code == 2
    assert "unknown revision 'no-such-branch'" in bad.stderr


def test_without_distill_commit_shows_the_last_playbook_commit(demo_repo: MemoryRepo, make_cli) -> None:
    data = json.loads(make_cli(demo_repo.root)("diff", "--json").stdout)
    # The demo memory's commit added the playbook: every rule is new (15 with the visual one).
    assert data["summary"]["added"] == 15
    init = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    assert data["from"]["label"] == f"{init[:10]}^ (before commit {init[:10]})"
    cited = load_playbook(demo_repo).cited_episode_ids()
    assert {c["id"] for c in data["new_citations"]} == cited and len(cited) == 31


def test_deleted_rule_and_color(distilled: Distilled, make_cli) -> None:
    repo = distilled.repo
    book = load_playbook(repo)
    save_playbook(repo, replace(book, rules=tuple(r for r in book.rules if r.id != "PB-13")))
    cli = make_cli(repo.root)
    out = cli("diff").stdout
    assert "! PB-13: Source every statistic before publishing  (removed)" in out
    assert "without being retired" in out
    colored = cli("diff", "--color", "HEAD~1", "HEAD").stdout
    assert "\x1b[31m" in colored and "[-one-]" not in colored


def test_unparseable_side_is_a_clear_error(distilled: Distilled, make_cli) -> None:
    repo = distilled.repo
    repo.playbook_path.write_text("# Playbook\n\n## PB-01 no colon\n\ntext\n")
    result = make_cli(repo.root)("diff")
    assert result.exit_code == 1
    assert "memory/playbook.md (working tree)" in result.stderr
    assert "cannot parse heading" in result.stderr


def _configure_driver(root) -> None:  # type: ignore[no-untyped-def]
    (root / ".gitattributes").write_text("memory/playbook.md diff=scarwarden\n")
    git(root, "config", "diff.scarwarden.textconv", "scarwarden diff --textconv")
    git(root, "config", "diff.scarwarden.xfuncname", "^(PB-[0-9]+: .*)$")


def test_git_diff_and_log_show_rules_through_textconv(distilled: Distilled) -> None:
    root = distilled.repo.root
    _configure_driver(root)
    log = git(root, "log", "-p", "-1", "--format=%s", "--", "memory/playbook.md").stdout
    assert log.startswith(DISTILL_SUBJECT)
    for line in [
        "-PB-01 | Use one emoji at most and put the hashtags at the end of the post.",
        "+PB-01 | Use no emoji and put the hashtags at the end of the post.",
        "-PB-01 tag: hook",
        "+PB-01 tag: emoji",
        "-PB-01 learnt in: ep-72r3dswafq",
        f"+PB-01 learnt in: {distilled.emoji.id}",
        "-PB-04: Route outage reports to the on-call engineer",
        "+PB-04: Route outage reports to the on-call engineer  [retired]",
        f"+PB-04 retired: {RETIRE_REASON}",
        "+PB-04 replaced by: PB-15",
        "+PB-15: Page on-call through the incident channel for outages",
        f"+PB-15 learnt in: {distilled.outage.id}",
    ]:
        assert line in log.splitlines(), line
    # The retired rule did not "move": its unchanged lines are context, not -/+.
    assert "-PB-04 tag: outage" not in log
    # Hunk headers name the rule the hunk is in.
    assert "@@ PB-03: Treat billing disputes as high priority" in log
    # Uncommitted edits through plain `git diff` too.
    text = distilled.repo.playbook_path.read_text()
    distilled.repo.playbook_path.write_text(text.replace("- Tags: billing,", "- Tags: invoice, billing,"))
    diff = git(root, "diff").stdout
    assert "+PB-03 tag: invoice" in diff.splitlines()
    # Without the driver git shows the markdown lines: the textconv was what we saw.
    raw = git(root, "diff", "--no-textconv").stdout
    assert "+- Tags: invoice, billing, dispute, ticket, priority, triage" in raw


def test_textconv_of_a_broken_playbook_shows_it_raw(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = render_textconv("# Playbook\n\n## PB-1: bad id\n\ntext\n")
    assert out.startswith("# scarwarden: this playbook does not parse (")
    assert out.endswith("## PB-1: bad id\n\ntext\n")


def test_textconv_of_a_fifo_is_refused_not_waited_on(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # 'diff --textconv FIFO' waited forever for a writer, where every other reader of a
    # playbook refuses a FIFO (exit 2, naming it).
    import os
    import subprocess
    import sys

    fifo = tmp_path / "playbook.md"
    os.mkfifo(fifo)
    proc = subprocess.run(
        [sys.executable, "-m", "scarwarden", "diff", "--textconv", str(fifo)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=15,
    )
    assert proc.returncode == 2, proc.stderr
    assert "playbook.md: is not a regular file" in proc.stderr and "Traceback" not in proc.stderr
