"""``scarwarden redact``: the one permitted change to an episode, proved by the gate and
respected by every view; forged redactions refused; a purge with git filter-repo.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, head
from helpers import add_rule, write

from scarwarden.files import playbook as pb
from scarwarden.files.playbook_edit import load_playbook
from scarwarden.gate.check import check_all, check_staged
from scarwarden.gate.hooks import install
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo, open_repo

EP = "ep-hkgnqdz88f"  # the demo's LinkedIn beta post: cited by PB-01
SECRET_WORDS = "Monday morning ticket backlog"  # from its correction


def path_of(repo: MemoryRepo, ep_id: str) -> str:
    return git(repo.root, "ls-files", f"{repo.episodes_rel}/**/{ep_id}.yaml").stdout.strip()


def cited_by_two(repo: MemoryRepo) -> list[str]:
    """Make EP cited by two rules (PB-01 and a new one), committed; their IDs."""
    rel = add_rule(repo, [EP, "ep-vd4adns6h9"], title="Lead LinkedIn launch posts with the backlog pain")
    git(repo.root, "add", rel)
    git(repo.root, "commit", "-q", "-m", "a second rule citing the beta post")
    return [r.id for r in load_playbook(repo).rules if EP in r.episode_ids]


def test_redact_an_episode_cited_by_two_rules_and_every_view_respects_it(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    rules = cited_by_two(demo_repo)
    assert len(rules) == 2
    install(root)
    rel = path_of(demo_repo, EP)
    old_raw = (root / rel).read_bytes()
    assert cli("index").exit_code == 0  # the index holds the old content first
    before = head(root)

    result = cli("redact", EP, "--reason", "quoted a customer ticket", "--json")
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert done["sha256"] == hashlib.sha256(old_raw).hexdigest()
    # One commit (through the installed hook): the stub and the record of the act.
    assert git(root, "rev-parse", "HEAD~1").stdout.strip() == before
    files = git(root, "show", "--name-status", "--format=", "HEAD").stdout.split()
    record_rel = next(f for f in files if f.endswith(f"{done['record']}.yaml"))
    assert files == ["M", rel, "A", record_rel] or files == ["A", record_rel, "M", rel]
    assert "Scarwarden-Redacted: " + EP in git(root, "log", "-1", "--format=%B").stdout
    stub = (root / rel).read_text()
    assert SECRET_WORDS not in stub and "task: '[redacted]'" in stub
    assert f"record: {done['record']}" in stub and "reason: quoted a customer ticket" in stub
    record = (root / record_rel).read_text()
    assert f"refs: [{EP}]" in record and "quoted a customer ticket" in record

    # verify and the gate prove it; the rules citing it are flagged.
    proved = verify(demo_repo)
    assert proved.ok and proved.redactions == 1, proved.problems
    report = check_all(demo_repo)
    assert report.ok
    flagged = sorted(w.rule for w in report.warnings if w.code == "evidence-redacted")
    assert flagged == sorted(rules)
    checked = cli("check", "--all")
    assert checked.exit_code == 0 and "evidence redacted" in checked.output

    # review, rule show, recall, export, the index.
    review = cli("review", "--base", before, "--json")
    warnings = [w["message"] for w in json.loads(review.stdout)["warnings"]]
    assert sorted(m.split()[0] for m in warnings if "evidence redacted" in m) == sorted(rules)
    shown = json.loads(cli("rule", "show", rules[0], "--json").stdout)
    assert shown["evidence_redacted"] == [EP]
    assert SECRET_WORDS not in json.dumps(shown)
    assert "(evidence redacted)" in cli("rule", "show", rules[0]).output
    recalled = json.loads(cli("recall", "Draft a LinkedIn post announcing the beta", "--json").stdout)
    hits = [r for r in recalled["rules"] if r["id"] in rules]
    assert hits and all(r["evidence_redacted"] == [EP] for r in hits)
    assert SECRET_WORDS not in json.dumps(recalled)
    assert "evidence redacted: " + EP in cli("recall", "Draft a LinkedIn post announcing the beta").output
    assert cli("export", "agents-md").exit_code == 0
    agents = (root / "AGENTS.md").read_text()
    assert f"(evidence redacted: {EP})" in agents and SECRET_WORDS not in agents
    found = cli("episode", "list", "--search", "backlog", "--json")
    assert EP not in found.output
    assert SECRET_WORDS not in cli("episode", "show", EP).output


def test_web_ui_shows_the_stub_and_flags_the_rules(cli, demo_repo: MemoryRepo) -> None:
    pytest.importorskip("flask")
    from scarwarden.audit.web.app import create_app

    rules = cited_by_two(demo_repo)
    assert cli("redact", EP, "--reason", "quoted a customer").exit_code == 0
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    for rule_id in rules:
        page = client.get(f"/rules/{rule_id}").get_data(as_text=True)
        assert "evidence redacted" in page and SECRET_WORDS not in page, rule_id
    page = client.get(f"/episodes/{EP}").get_data(as_text=True)
    assert "Redacted on" in page and "quoted a customer" in page and SECRET_WORDS not in page


def test_forged_redactions_are_refused_by_the_hook_and_verify(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    rel = path_of(demo_repo, EP)
    old = (root / rel).read_text()
    assert cli("redact", EP, "--reason", "honest one", "--json").exit_code == 0
    honest = (root / rel).read_text()
    git(root, "reset", "-q", "--hard", "HEAD~1")  # back to before the redaction
    install(root)
    before = head(root)
    record = re.search(r"record: (ep-\w+)", honest).group(1)  # type: ignore[union-attr]
    cases = {
        "a wrong hash": honest.replace(re.search(r"sha256: (\w+)", honest).group(1), "f" * 64),  # type: ignore[union-attr]
        "another field changed": honest.replace("at: 2026-08-04T09:40:00Z", "at: 2026-08-04T09:41:00Z"),
        "no record in the commit": honest,
        "content edited, no stub": old.replace("31 reactions", "310 reactions"),
    }
    for name, text in cases.items():
        (root / rel).write_text(text)
        git(root, "add", rel)
        proc = git(root, "commit", "-m", f"forged: {name}", check=False)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, (name, out)
        code = "was modified; the ledger is append-only" if "no stub" in name else "is not a valid redaction"
        assert f"episode {EP} " in out and code in out, (name, out)
        assert head(root) == before
    report = check_staged(demo_repo)
    assert [p.code for p in report.problems] == ["episode-modified"]
    # The hash right but the record missing: the act is not on the record.
    (root / rel).write_text(honest)
    git(root, "add", rel)
    [problem] = check_staged(demo_repo).problems
    assert (
        problem.code == "redaction-invalid"
        and f"({record}) is not added in the same commit" in problem.message
    )
    # Pushed past every hook (SCARWARDEN_SKIP=1 also silences the reference-transaction
    # hook): verify finds it.
    git(root, "commit", "-q", "--no-verify", "-m", "sneaked", env={**os.environ, "SCARWARDEN_SKIP": "1"})
    result = verify(demo_repo)
    assert [p.code for p in result.problems] == ["redaction-invalid"]


def test_redact_refuses_unknown_uncommitted_and_bad_fields(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    before = head(root)
    unknown = cli("redact", "ep-nosuch0001", "--reason", "x")
    assert unknown.exit_code == 2 and "no episode ep-nosuch0001 in the ledger" in unknown.output
    bad_id = cli("redact", "../etc", "--reason", "x")
    assert bad_id.exit_code == 2 and "is not an episode ID" in bad_id.output
    assert cli("redact", EP, "--reason", "  ").exit_code == 2
    fields = cli("redact", EP, "--fields", "id,colour", "--reason", "x")
    assert fields.exit_code == 2 and "id, colour are not a field" in fields.output
    rel = path_of(demo_repo, EP)
    (root / rel).write_text((root / rel).read_text() + "x-note: edited\n")
    dirty = cli("redact", EP, "--reason", "x")
    assert dirty.exit_code == 2 and "has uncommitted changes" in dirty.output
    git(root, "checkout", "--", rel)
    assert head(root) == before and git(root, "status", "--porcelain").stdout == ""


def test_partial_redaction_keeps_the_rest_and_refuses_a_leftover_secret(cli, demo_repo: MemoryRepo) -> None:
    from fake_secrets import fake_secrets

    root = demo_repo.root
    secret = fake_secrets()["github-token"]
    text = (
        "id: ep-leak000001\nat: 2026-11-20T10:00:00Z\ntask: Deploy\n"
        f"action: {json.dumps(secret + ' scarwarden:allow-secret')}\noutcome: {json.dumps(secret)}\n"
    )
    rel = write(root, f"{demo_repo.episodes_rel}/2026/11/ep-leak000001.yaml", text)
    git(root, "add", rel)
    git(root, "commit", "-q", "--no-verify", "-m", "a leak that got in")
    before = head(root)
    left = cli("redact", "ep-leak000001", "--fields", "action", "--reason", "token")
    assert (
        left.exit_code == 1
        and "would still hold a secret" in left.output
        and "add outcome to --fields" in left.output
    )
    assert head(root) == before and git(root, "status", "--porcelain").stdout == ""
    ok = cli("redact", "ep-leak000001", "--fields", "action,outcome", "--reason", "token")
    assert ok.exit_code == 0, ok.output
    stub = (root / rel).read_text()
    assert "task: Deploy" in stub and secret not in stub and stub.count("'[redacted]'") == 2
    assert verify(demo_repo).ok


def test_distill_proposes_retiring_a_rule_left_without_evidence(cli, demo_repo: MemoryRepo) -> None:
    book = load_playbook(demo_repo)
    rule = next(r for r in book.rules if len(r.episode_ids) == 2)
    for ep in rule.episode_ids:
        assert cli("redact", ep, "--reason", "withdrawn").exit_code == 0
    out = cli("distill", "--offline", "--dry-run").output
    assert f"Retired {rule.id}" in out and "all its evidence was redacted" in out


def test_purge_with_git_filter_repo_then_verify(cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """docs/privacy.md's procedure, as written: the old blob is gone, verify passes."""
    pytest.importorskip("git_filter_repo")
    root = demo_repo.root
    rel = path_of(demo_repo, EP)
    old_blob = git(root, "rev-parse", f"HEAD:{rel}").stdout.strip()
    assert cli("redact", EP, "--reason", "purge test").exit_code == 0
    redaction = git(root, "log", "-1", "--format=%H", f"--grep=Scarwarden-Redacted: {EP}").stdout.strip()
    old = git(root, "rev-parse", f"{redaction}^:{rel}").stdout.strip()
    assert old == old_blob
    stub = tmp_path / "stub.yaml"
    stub.write_bytes(subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=root, capture_output=True).stdout)
    callback = f"if blob.original_id == b'{old}':\n    blob.data = open({str(stub)!r}, 'rb').read()\n"
    proc = subprocess.run(
        [sys.executable, "-m", "git_filter_repo", "--force", "--blob-callback", callback],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(root, "cat-file", "-e", old, check=False).returncode != 0  # gone from the store
    everything = git(root, "log", "--all", "-p").stdout
    assert SECRET_WORDS not in everything
    result = verify(demo_repo)
    assert result.ok, [str(p) for p in result.problems]
    assert check_all(demo_repo).ok
    assert pb.parse((root / demo_repo.playbook_rel).read_text())


def test_a_redaction_merged_either_way_passes_verify_and_the_range_check(cli, demo_repo: MemoryRepo) -> None:
    from scarwarden.gate.check import check_range

    root = demo_repo.root
    git(root, "checkout", "-q", "-b", "side")
    assert cli("episode", "add", "--task", "Side work", "--outcome", "done").exit_code == 0
    git(root, "checkout", "-q", "main")
    assert cli("redact", EP, "--reason", "withdrawn").exit_code == 0
    main_tip = head(root)
    git(root, "checkout", "-q", "side")
    git(root, "merge", "-q", "--no-edit", "main")  # the redaction comes into the branch
    side_tip = head(root)
    assert verify(demo_repo).ok, [str(p) for p in verify(demo_repo).problems]
    assert check_range(demo_repo, main_tip, side_tip).ok  # a pull request's range: the merge alone
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "--no-edit", "side")
    result = verify(demo_repo)
    assert result.ok and result.redactions == 1, [str(p) for p in result.problems]


@pytest.mark.parametrize("fields", ["", ",", " , "])
def test_an_empty_fields_list_is_refused_not_widened_to_every_field(
    cli, demo_repo: MemoryRepo, fields: str
) -> None:
    root = demo_repo.root
    before = head(root)
    result = cli("redact", EP, "--reason", "x", "--fields", fields)
    assert result.exit_code == 2 and "--fields is empty" in result.output
    assert head(root) == before and git(root, "status", "--porcelain").stdout == ""


def test_the_library_refuses_an_empty_fields_list_too(demo_repo: MemoryRepo) -> None:
    from scarwarden.errors import UsageError
    from scarwarden.files.redact import redact

    before = head(demo_repo.root)
    with pytest.raises(UsageError, match="--fields is empty"):
        redact(demo_repo, EP, "x", fields=[" "])
    assert head(demo_repo.root) == before


def test_redacting_again_skips_what_is_gone_and_commits_nothing_when_nothing_is_left(
    cli, demo_repo: MemoryRepo
) -> None:
    root = demo_repo.root
    assert cli("redact", EP, "--fields", "action,tags", "--reason", "x").exit_code == 0
    once = head(root)
    again = cli("redact", EP, "--fields", "action", "--fields", "tags", "--reason", "x")
    assert again.exit_code == 0, again.output
    assert "Nothing left to redact" in again.output and "action, tags already redacted" in again.output
    assert head(root) == once and git(root, "status", "--porcelain").stdout == ""

    more = cli("redact", EP, "--fields", "action,outcome", "--reason", "x", "--json")
    assert more.exit_code == 0, more.output
    done = json.loads(more.stdout)
    assert done["fields"] == ["outcome"] and done["already_redacted"] == ["action"]
    assert cli("redact", EP, "--reason", "x").exit_code == 0  # the rest
    full = head(root)
    last = cli("redact", EP, "--reason", "x", "--json")
    assert last.exit_code == 0 and json.loads(last.stdout)["commit"] is None
    assert head(root) == full and git(root, "status", "--porcelain").stdout == ""
    proved = verify(demo_repo)
    assert proved.ok and proved.redactions == 3, proved.problems


@pytest.mark.parametrize("hooks", [True, False], ids=["hooks", "no-hooks"])
def test_an_episode_a_sentence_map_names_can_be_redacted(cli, demo_repo: MemoryRepo, hooks: bool) -> None:
    """A rule whose ``- Sentences from:`` map names an episode blocked that episode's
    redaction: the support check read the redacted stub, which shares no word with the
    sentence. With the hooks the commit was refused ('sentence 1 shares no word with
    ep-...'), so a leak could not be taken back; without them redact committed, and
    ``check --all`` and ``verify`` failed from then on. A redacted episode's sentences are
    the evidence-redacted warning's, not an unsupported sentence."""
    root = demo_repo.root
    if hooks:
        install(root)
    added = cli(
        "episode",
        "add",
        "--task",
        "Draft the launch post",
        "--correction",
        "Lead with the reader's pain point",
        "--json",
    )
    assert added.exit_code == 0, added.output
    ep = json.loads(added.stdout)["id"]
    rule = cli(
        "rule",
        "add",
        "--text",
        "Lead with the reader's pain point.",
        "--cites",
        ep,
        "--sentences-from",
        f"1: {ep}",
    )
    assert rule.exit_code == 0, rule.output
    before = head(root)
    redacted = cli("redact", ep, "--reason", "a customer's words")
    assert redacted.exit_code == 0, redacted.output
    assert head(root) != before
    assert check_all(open_repo(root)).ok
    report = verify(open_repo(root))
    assert report.ok, [str(p) for p in report.problems]
    assert any("redacted" in str(w) for w in check_all(open_repo(root)).warnings)
