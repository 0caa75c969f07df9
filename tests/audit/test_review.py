"""`scarwarden review`: the pull-request report, annotations, the gate, action.yml."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, git
from distilled_repo import RETIRE_REASON, SCRIPT, Distilled

from scarwarden.audit.review.build import build_review
from scarwarden.audit.review.markdown import code, md
from scarwarden.files import playbook as pb
from scarwarden.files.playbook_edit import load_playbook, save_playbook
from scarwarden.repo import MemoryRepo


def _gate_available() -> bool:
    try:
        import scarwarden.gate.check  # noqa: F401
        import scarwarden.gate.verify  # noqa: F401
    except ImportError:
        return False
    return True


def _commit_playbook(repo: MemoryRepo, book: pb.Playbook, subject: str, *, no_verify: bool = False) -> None:
    save_playbook(repo, book)
    git(repo.root, "add", repo.playbook_rel)
    git(repo.root, "commit", "-q", *(["--no-verify"] if no_verify else []), "-m", subject)


def test_report_shows_each_change_with_its_evidence(distilled: Distilled, make_cli) -> None:
    result = make_cli(distilled.repo.root)("review", "--base", distilled.init)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(
        f"## Scarwarden review: memory changes in `{distilled.init[:10]}..{distilled.distill[:10]}`\n"
    )
    assert "| Rules | 1 added, 1 changed, 1 retired |" in out
    assert "| Episodes added to the ledger | 3 |" in out
    assert "| Reviewer warnings | 4 |" in out
    # PB-01: old and new form, the word diff, citations, evidence quoted word for word.
    pb01 = out.split("#### PB-01: Lead LinkedIn posts with the reader's pain (changed)")[1]
    pb01 = pb01.split("#### PB-04")[0]
    before, after = pb01.split("**After**")
    assert "> Open every LinkedIn post" in before and "Use one emoji at most" in before
    assert "Use no emoji and put the hashtags" in after
    assert "- Text: " in after and "Use ~~one~~**no** emoji ~~at most~~ and put" in after
    assert "- Tags: +`emoji` −`hook`" in after
    assert f"- Citations: +{distilled.emoji.id} +{distilled.script.id} −ep-72r3dswafq" in after
    assert (
        f"> **{distilled.emoji.id}** · 2026-11-20 · agent writer · corrected by maya *(new citation)*"
    ) in after
    assert "> **Task:** Draft a LinkedIn post for the pricing webinar" in after
    assert "> **Outcome:** Two followers called the post childish; reach was half the usual" in after
    assert (
        "> **Correction:** No emoji at all in LinkedIn posts: the audience reads them as unserious"
    ) in after
    assert "> **ep-72r3dswafq** · 2026-09-09 · agent writer *(citation removed)*" in after
    # Untrusted episode text cannot inject markup into the report.
    assert SCRIPT not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in after
    # PB-04 retired, with its reason; PB-15 new, with its single episode quoted.
    pb04 = out.split("#### PB-04")[1].split("#### PB-15")[0]
    assert f"**Retired:** {RETIRE_REASON} · **Replaced by:** PB-15" in pb04
    pb15 = out.split("#### PB-15: Page on-call through the incident channel for outages (added)")[1]
    assert "**New rule**" in pb15
    assert "> **Correction:** Page on-call through the incident channel; email is never a page" in pb15


def test_reviewer_warnings(distilled: Distilled) -> None:
    review = build_review(distilled.repo, distilled.init, run_gate=False)
    messages = [(w.level, w.rule_id, w.message) for w in review.warnings]
    assert messages == [
        (
            "warning",
            "PB-01",
            "PB-01 lost citations: ep-72r3dswafq; check that the episodes "
            "it still cites support the rule as written",
        ),
        (
            "warning",
            "PB-01",
            f"PB-01 cites {distilled.script.id}, which records no outcome "
            "and no correction: it shows what the agent did, not that the "
            "rule is right",
        ),
        (  # the distilled fixture's PB-01 says "no emoji" and still cites "one emoji at most"
            "warning",
            "PB-01",
            "PB-01 is contradicted by ep-vd4adns6h9, which it cites (a different limit on emoji "
            "(0 against 1)): a rule must not cite evidence against itself; supersede or revise it",
        ),
        (
            "warning",
            "PB-15",
            f"PB-15 rests on a single episode ({distilled.outage.id}): one "
            "experience may be an accident; look for a second before "
            "relying on it",
        ),
    ]


def test_overlap_and_deleted_rule_warnings(distilled: Distilled) -> None:
    repo = distilled.repo
    book = load_playbook(repo)
    pb02 = book.get("PB-02")
    assert pb02 is not None
    copy = pb.make_rule(
        "PB-16",
        "Do not post discount codes on social media",
        "Never put a discount code in a public social post, because public "
        "codes reach coupon sites within days. Send codes only to the email list.",
        pb02.tags,
        pb02.episode_ids,
    )
    book = book.with_rule(copy)
    book = replace(book, rules=tuple(r for r in book.rules if r.id != "PB-13"))
    _commit_playbook(repo, book, "edit: a near-duplicate rule and a deleted one", no_verify=True)
    review = build_review(repo, distilled.distill, run_gate=False)
    found = {(w.level, w.rule_id): w.message for w in review.warnings}
    assert found[("error", "PB-13")].startswith("PB-13 was deleted instead of retired")
    overlap = found[("warning", "PB-16")]
    assert overlap.startswith(
        "PB-16 overlaps heavily with PB-02 (Never share discount codes "
        "on public social media): text similarity "
    )
    assert "tag similarity 1.00" in overlap
    # The unrelated rules of the demo do not overlap with each other.
    assert not [w for w in review.warnings if "overlaps" in w.message and w.rule_id != "PB-16"]


@pytest.mark.parametrize("where", [".git/config", "memory/playbook.md", "scarwarden.yaml"])
def test_github_summary_pointed_at_the_repositorys_own_files_is_refused(
    distilled: Distilled, make_cli, where: str
) -> None:
    # --output refuses these; $GITHUB_STEP_SUMMARY did not: the report was appended to
    # .git/config, and every git command after it failed on a bad config line.
    root = distilled.repo.root
    target = root / where
    before = target.read_bytes() if target.exists() else None
    result = make_cli(root)(
        "review", "--base", distilled.init, "--github", env={"GITHUB_STEP_SUMMARY": str(target)}
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: GITHUB_STEP_SUMMARY {where}: refusing to write")
    assert (target.read_bytes() if target.exists() else None) == before
    assert git(root, "status", "--porcelain").stdout == ""


def test_github_mode_writes_summary_and_annotations(distilled: Distilled, make_cli, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = make_cli(distilled.repo.root)(
        "review",
        "--base",
        distilled.init,
        "--github",
        "--output",
        str(tmp_path / "r.md"),
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.exit_code == 0, result.output
    report = (tmp_path / "r.md").read_text()
    assert summary.read_text() == "earlier step\n" + report + "\n"
    lines = result.stdout.splitlines()
    text = distilled.repo.playbook_path.read_text().splitlines()
    pb15_line = text.index("## PB-15: Page on-call through the incident channel for outages") + 1
    assert (
        f"::warning file=memory/playbook.md,line={pb15_line},title=Scarwarden::PB-15 rests "
        f"on a single episode ({distilled.outage.id}): one experience may be an accident; "
        "look for a second before relying on it"
    ) in lines
    assert sum(1 for line in lines if line.startswith("::warning file=memory/playbook.md,line=3,")) == 3
    assert "## Scarwarden review" not in result.stdout  # the report went to --output


def test_json_output(distilled: Distilled, make_cli) -> None:
    data = json.loads(make_cli(distilled.repo.root)("review", "--base", distilled.init, "--json").stdout)
    assert {
        "base",
        "head",
        "ok",
        "gate",
        "gate_note",
        "warnings",
        "episodes_added",
        "diff",
        "evidence",
    } <= set(data)
    assert data["base"]["rev"] == distilled.init and data["head"]["rev"] == distilled.distill
    assert len(data["episodes_added"]) == 3
    assert data["evidence"][distilled.outage.id]["correction"].startswith("Page on-call")
    assert data["diff"]["summary"]["retired"] == 1


def test_default_base_is_the_last_distill(distilled: Distilled, make_cli) -> None:
    out = make_cli(distilled.repo.root)("review").stdout
    assert f"`{distilled.base[:10]}..{distilled.distill[:10]}`" in out.splitlines()[0]
    assert "| Episodes added to the ledger | 0 |" in out


def test_base_uses_the_merge_base(distilled: Distilled, make_cli) -> None:
    root = distilled.repo.root
    git(root, "checkout", "-q", "-b", "topic", distilled.base)
    git(root, "commit", "-q", "--allow-empty", "-m", "unrelated work on topic")
    git(root, "checkout", "-q", "main")
    # main moved on (the distill) since topic forked: the report covers main's side only.
    data = json.loads(make_cli(root)("review", "--base", "topic", "--json").stdout)
    assert data["base"]["rev"] == distilled.base
    assert data["base"]["label"] == "merge base of topic and HEAD"


def test_unknown_base_is_a_usage_error(distilled: Distilled, make_cli) -> None:
    result = make_cli(distilled.repo.root)("review", "--base", "origin/nope")
    assert result.exit_code == 2
    assert "unknown revision 'origin/nope'" in result.stderr
    assert "fetch-depth: 0" in result.stderr
    empty = make_cli(distilled.repo.root)("review", "--base", "")
    assert empty.exit_code == 2 and "--base is empty" in empty.stderr
    assert "pull_request events" in empty.stderr
    # --head "$HEAD_SHA" with the variable unset reviewed HEAD instead, silently.
    empty_head = make_cli(distilled.repo.root)("review", "--base", distilled.init, "--head", "")
    assert empty_head.exit_code == 2 and "--head is empty" in empty_head.stderr


def test_markdown_escaping() -> None:
    assert md("# not a heading") == "\\# not a heading"
    assert md("- item") == "\\- item"
    assert md("12) x") == "12\\) x"
    assert md("*bold* [link](http://x) @team <img src=x>") == (
        "\\*bold\\* \\[link\\](http://x) &#64;team &lt;img src=x&gt;"
    )
    # A file name with backticks cannot break out of its code span.
    assert code("memory/a`<b>`.yaml:3") == "``memory/a`<b>`.yaml:3``"
    assert code("`x") == "`` `x ``"


@pytest.mark.skipif(not _gate_available(), reason="the gate (scarwarden.check) is not built yet")
def test_gate_passes_on_an_honest_range(distilled: Distilled, make_cli) -> None:
    result = make_cli(distilled.repo.root)("review", "--base", distilled.init)
    assert result.exit_code == 0
    assert "| Provenance gate | ✅ passed |" in result.stdout


@pytest.mark.skipif(not _gate_available(), reason="the gate (scarwarden.check) is not built yet")
def test_gate_failure_exits_1_with_error_annotations(distilled: Distilled, make_cli, tmp_path: Path) -> None:
    repo = distilled.repo
    book = load_playbook(repo)
    pb03 = book.get("PB-03")
    assert pb03 is not None
    book = book.with_rule(replace(pb03, episode_ids=pb03.episode_ids + ("ep-doesnotexist",)))
    _commit_playbook(repo, book, "edit: cite an episode that does not exist", no_verify=True)
    summary = tmp_path / "summary.md"
    result = make_cli(repo.root)(
        "review", "--base", distilled.distill, "--github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert result.exit_code == 1
    assert "the provenance gate failed" in result.stderr
    assert "| Provenance gate | ❌ failed: " in summary.read_text()
    assert "ep-doesnotexist" in summary.read_text()
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert errors and any("ep-doesnotexist" in line for line in errors)
    assert any(line.startswith("::error file=memory/playbook.md") for line in errors)


def test_action_yml_runs_check_and_review(distilled: Distilled, tmp_path: Path) -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert "${{ github.action_path }}" in install["run"]
    check = next(s for s in steps if "scarwarden check" in s.get("run", ""))
    review = next(s for s in steps if "scarwarden review" in s.get("run", ""))
    assert "--from-ref" in check["run"] and "--to-ref" in check["run"]
    assert "--github" in review["run"] and review.get("if") == "${{ always() }}"
    # Run the steps' scripts as the runner would, with the inputs in their env.
    summary = tmp_path / "summary.md"

    def run(step: dict[str, object]) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary))
        for key, value in dict(step.get("env", {})).items():  # type: ignore[call-overload]
            env[key] = {"${{ inputs.base }}": distilled.init, "${{ inputs.head }}": distilled.distill}.get(
                value, value
            )
        return subprocess.run(
            ["bash", "-e", "-c", str(step["run"])],
            cwd=distilled.repo.root,
            env=env,
            capture_output=True,
            text=True,
        )

    if _gate_available():
        gate = run(check)
        assert gate.returncode == 0, gate.stderr
        assert gate.stdout.startswith("scarwarden check: OK, commits ")
    # On a push event the base input is empty: the gate step says so instead of guessing.
    no_base = subprocess.run(
        ["bash", "-e", "-c", str(check["run"])],
        cwd=distilled.repo.root,
        env=dict(os.environ, SCARWARDEN_BASE="", SCARWARDEN_HEAD="HEAD"),
        capture_output=True,
        text=True,
    )
    assert no_base.returncode == 2
    assert no_base.stdout.startswith("::error title=Scarwarden::no base commit")
    proc = run(review)
    assert proc.returncode == 0, proc.stderr
    assert "PB-15 rests on a single episode" in proc.stdout, proc.stderr
    assert "#### PB-04: Route outage reports to the on-call engineer (retired)" in summary.read_text()


def test_each_new_sentence_is_shown_beside_its_episodes_words(distilled: Distilled, make_cli) -> None:
    """Issue 25: a reviewer sees each new sentence and the words its episodes share."""
    out = make_cli(distilled.repo.root)("review", "--base", distilled.init).stdout
    pb15 = out.split("#### PB-15: Page on-call through the incident channel for outages (added)")[1]
    block = pb15.split("**New sentences and the episode words that support them**")[1].split("**Evidence**")[
        0
    ]
    lines = [ln for ln in block.splitlines() if ln.startswith("- ")]
    assert len(lines) == 2 and "*incident*, *channel*" in lines[0]
    late = [ln for ln in lines if ln.startswith("- Page on-call as soon as three similar failure reports")]
    assert late == [
        "- Page on-call as soon as three similar failure reports arrive within 30 minutes. "
        "(from the rule's citations) ← " + late[0].split(" ← ")[1]
    ]
    assert "*page*" in late[0] and "*minutes*" in late[0] and "no word in common" not in late[0]


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("", "--output is empty"),
        ("memory/playbook.md", "inside the memory folder"),
        (".git/HEAD", "inside the git directory"),
        ("scarwarden.yaml", "over the settings"),
    ],
)
def test_output_onto_the_repository_own_files_is_refused(
    demo_repo: MemoryRepo, make_cli, chdir, target: str, says: str
) -> None:
    root = demo_repo.root
    chdir(root)  # a relative --output is the cwd's
    before = {p: (root / p).read_bytes() for p in ("memory/playbook.md", ".git/HEAD")}
    result = make_cli(root)("review", "--base", "HEAD", "--output", target)
    assert result.exit_code == 2 and says in result.stderr, result.output
    assert {p: (root / p).read_bytes() for p in before} == before
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == ""


@pytest.mark.parametrize("args", [[], ["--json"], ["--github"]])
def test_a_failed_gate_still_exits_1_when_the_reader_closes_the_pipe(
    distilled: Distilled, tmp_path: Path, args: list[str]
) -> None:
    """`scarwarden review --base main | head` in a CI step (pipefail): stdout closed
    before the report was written ended the command with exit 0, as a listing's closed
    pipe does, so a range the gate refused passed the job."""
    repo = distilled.repo
    book = load_playbook(repo)
    pb03 = book.get("PB-03")
    assert pb03 is not None
    book = book.with_rule(replace(pb03, episode_ids=pb03.episode_ids + ("ep-doesnotexist",)))
    _commit_playbook(repo, book, "edit: cite an episode that does not exist", no_verify=True)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write is refused
    try:
        done = subprocess.run(
            [sys.executable, "-m", "scarwarden", "review", "--base", distilled.distill, *args],
            cwd=repo.root,
            stdout=write,
            stderr=subprocess.PIPE,
            env={**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")},
            check=False,
        )
    finally:
        os.close(write)
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
