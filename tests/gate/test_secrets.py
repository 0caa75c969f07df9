"""Secrets kept out of memory: the installed hook, ``episode add``, MCP, the web form,
``rule add`` and the playbook; personal data by policy; what ordinary text looks like.

Every credential here is fake and built at run time (tests/fake_secrets.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, head
from fake_secrets import fake_secrets
from helpers import add_rule, write
from ordinary_episodes import ordinary_texts
from test_precommit_framework import framework, hook_repo, pre_commit_home  # noqa: F401  (fixtures)

from scarwarden.errors import ValidationError
from scarwarden.files import privacy, secret_scan
from scarwarden.files.record import add_episodes
from scarwarden.gate.check import check_staged
from scarwarden.gate.hooks import install
from scarwarden.repo import MemoryRepo, open_repo

SECRETS = fake_secrets()


def episode_yaml(ep_id: str, action: str, **extra: str) -> str:
    """An episode whose ``action`` holds ``action`` (JSON quoting: valid YAML for any text)."""
    lines = [
        f"id: {ep_id}",
        "at: 2026-11-20T10:00:00Z",
        "agent: ops",
        "task: Deploy the billing service",
        f"action: {json.dumps(action)}",
        "outcome: It worked",
        "source: outcome",
    ]
    lines += [f"{k}: {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def ep_path(repo: MemoryRepo, ep_id: str) -> str:
    return f"{repo.episodes_rel}/2026/11/{ep_id}.yaml"


def test_the_fake_corpus_is_big_enough_and_every_kind_is_found() -> None:
    kinds = {secret_scan.scan_text(text)[0].kind for text in SECRETS.values() if secret_scan.scan_text(text)}
    assert len(SECRETS) >= 30 and len(kinds) >= 25
    for name, text in SECRETS.items():
        assert secret_scan.scan_text(text), name


def _commit_one_episode_each(repo: MemoryRepo, texts: dict[str, str], ids: str) -> tuple[dict[str, str], str]:
    """One episode per text (its ``action``), all staged and committed at once through
    the installed hooks, which must refuse the commit: (name -> the file's path, what
    the commit printed). ``ids``: the episode IDs' format, numbered from 0."""
    root = repo.root
    staged = {}
    for n, (name, text) in enumerate(texts.items()):
        ep_id = ids.format(n)
        staged[name] = write(root, ep_path(repo, ep_id), episode_yaml(ep_id, text))
    git(root, "add", *staged.values())
    proc = git(root, "commit", "-m", f"leak {len(texts)} kinds", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    return staged, out


@pytest.mark.slow
def test_installed_hook_refuses_each_kind_and_never_prints_it(demo_repo: MemoryRepo) -> None:
    """One real ``git commit`` staging an episode of each kind: the hook names every file
    and its fingerprint, and no secret (a commit per kind cost ~0.3 s each, 35 of them)."""
    root = demo_repo.root
    install(root)
    before = head(root)
    staged, out = _commit_one_episode_each(demo_repo, SECRETS, "ep-secret{:04d}")
    assert "secrets never enter memory" in out and "scarwarden:allow-secret" in out
    assert head(root) == before
    for name, text in SECRETS.items():
        rel = staged[name]
        assert f"{rel}:5: field 'action': holds a secret: " in out, (name, out)
        assert secret_scan.scan_text(text)[0].fingerprint in out, name
        # The secret itself appears nowhere in what the hook prints.
        for word in text.replace('"', " ").split():
            if len(word) >= 16 and secret_scan.scan_text(word):
                assert word not in out, name


def test_ordinary_episodes_pass_the_hook(demo_repo: MemoryRepo) -> None:
    """60 ordinary texts (code, UUIDs, SHAs, base64 images, URLs without a password): the
    false-positive rate is 0/60 (docs/privacy.md)."""
    root = demo_repo.root
    texts = ordinary_texts()
    assert len(texts) >= 50
    flagged = [t for t in texts if secret_scan.scan_text(t) or list(privacy.find(t))]
    assert flagged == []
    install(root)
    paths = []
    for n, text in enumerate(texts):
        ep_id = f"ep-plain{n:04d}"
        paths.append(write(root, ep_path(demo_repo, ep_id), episode_yaml(ep_id, text)))
    git(root, "add", *paths)
    proc = git(root, "commit", "-m", "ordinary work", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_staged(demo_repo).ok


def test_inline_marker_and_allowlist_let_a_known_false_positive_in(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    text = SECRETS["github-token"]
    marked = write(
        root,
        ep_path(demo_repo, "ep-allowmark1"),
        episode_yaml("ep-allowmark1", text + " (a revoked example; scarwarden:allow-secret)"),
    )
    git(root, "add", marked)
    assert check_staged(demo_repo).ok
    listed = write(root, ep_path(demo_repo, "ep-allowlist1"), episode_yaml("ep-allowlist1", SECRETS["jwt"]))
    git(root, "add", listed)
    report = check_staged(demo_repo)
    assert [p.code for p in report.problems] == ["secret-found"]
    mark = report.problems[0].message.split(", ")[1].split(")")[0]
    assert mark.startswith("sha256:") and len(mark) == 19
    (root / "scarwarden.yaml").write_text(f"secrets:\n  allow:\n    - '{mark}'\n")
    assert check_staged(open_repo(root)).ok


def test_episode_add_refuses_a_secret_and_writes_nothing(cli, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo.root)
    result = cli("episode", "add", "--task", "Deploy", "--action", SECRETS["stripe-live-key"])
    assert result.exit_code == 1
    assert "field 'action': holds a secret: Stripe live key (stripe-key, sha256:" in result.output
    assert "sk" + "_live_" not in result.output
    assert head(demo_repo.root) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    ok = cli("episode", "add", "--task", "Deploy", "--action", "[redacted stripe-key] used for the charge")
    assert ok.exit_code == 0, ok.output


def test_batch_with_one_secret_names_it_and_writes_none(demo_repo: MemoryRepo) -> None:
    before = head(demo_repo.root)
    items = [{"task": "fine", "outcome": "ok"}, {"task": "leak", "correction": SECRETS["npm-token"]}]
    with pytest.raises(ValidationError) as exc:
        add_episodes(demo_repo, items, source="import.yaml")
    [problem] = exc.value.problems
    assert problem.field == "correction" and "npm access token" in problem.message
    assert head(demo_repo.root) == before


def test_mcp_record_episode_is_refused(demo_repo: MemoryRepo) -> None:
    from scarwarden.agents.mcp.tools import MemoryTools

    before = head(demo_repo.root)
    with pytest.raises(ValidationError, match="refused, it holds a secret"):
        MemoryTools(demo_repo).record_episode({"task": "ship", "action": SECRETS["anthropic-key"]})
    assert head(demo_repo.root) == before


def test_rule_add_refuses_a_secret_and_the_hook_refuses_a_playbook_line(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    ep = Path(git(root, "ls-files", demo_repo.episodes_rel).stdout.split()[0]).stem
    before = head(root)
    result = cli(
        "rule", "add", "--text", "Deploy with " + SECRETS["gitlab-token"], "--cites", ep, "--tag", "deploy"
    )
    assert result.exit_code == 1, result.output
    assert "holds a secret: GitLab token" in result.output and "nothing was written" in result.output
    assert head(root) == before and git(root, "status", "--porcelain").stdout == ""
    # By hand: a rule whose text holds a key, staged for the hook.
    rel = add_rule(demo_repo, [ep], title="Use the key " + SECRETS["google-api-key"] + " for maps")
    git(root, "add", rel)
    report = check_staged(demo_repo)
    assert [(p.code, p.file) for p in report.problems] == [("secret-found", rel)]
    assert report.problems[0].line is not None and "Google API key" in report.problems[0].message


def test_privacy_policy_warns_refuses_and_redacts(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    card = "4111 1111 1111 1111"  # the well-known Visa test number: passes Luhn
    assert privacy.luhn_ok(card.replace(" ", "")) and not privacy.luhn_ok("4111111111111112")
    text = f"Refunded jane.doe@acme.io, called +44 20 7946 0958, card {card}"
    warned = cli("episode", "add", "--task", "Refund", "--outcome", text)
    assert warned.exit_code == 0 and "warning:" in warned.output and "payment card number" in warned.output
    (root / "scarwarden.yaml").write_text("privacy:\n  email: refuse\n  phone: warn\n  card: refuse\n")
    git(root, "add", "scarwarden.yaml")
    git(root, "commit", "-q", "-m", "privacy policy")
    before = head(root)
    refused = cli("episode", "add", "--task", "Refund", "--outcome", text)
    assert refused.exit_code == 1
    assert "field 'outcome': holds personal data: an email address (privacy.email: refuse)" in refused.output
    assert "jane.doe" not in refused.output and head(root) == before
    redacted = cli("episode", "add", "--task", "Refund", "--outcome", text, "--redact-pii", "--json")
    assert redacted.exit_code == 0, redacted.output
    stored = json.loads(redacted.stdout)
    assert stored["outcome"] == "Refunded [email], called [phone], card [card]"
    (root / "scarwarden.yaml").write_text("privacy:\n  email: sometimes\n")
    bad = cli("episode", "add", "--task", "x", "--outcome", "y")  # a bad setting: a usage error
    assert bad.exit_code == 2 and "privacy.email must be off, warn or refuse" in bad.output


def test_an_unquoted_off_in_the_privacy_policy_is_off(cli, demo_repo: MemoryRepo) -> None:
    """docs/privacy.md writes ``phone: off`` unquoted, which YAML 1.1 reads as false: it
    was "privacy.phone must be str, got bool (False)" on every command (exit 2)."""
    root = demo_repo.root
    (root / "scarwarden.yaml").write_text("privacy:\n  email: warn\n  phone: off\n  card: no\n")
    config = open_repo(root).config.privacy
    assert (config.email, config.phone, config.card) == ("warn", "off", "off")
    added = cli(
        "episode",
        "add",
        "--task",
        "Call back",
        "--outcome",
        "Called +44 20 7946 0958, card 4111 1111 1111 1111",
    )
    assert added.exit_code == 0 and "warning:" not in added.output, added.output
    (root / "scarwarden.yaml").write_text("privacy:\n  phone: on\n")
    bad = cli("episode", "add", "--task", "x", "--outcome", "y")
    assert bad.exit_code == 2 and "privacy.phone must be off, warn or refuse, got true" in bad.output
    assert "unquoted on, yes or true" in bad.output


def test_gate_applies_the_privacy_policy(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    (root / "scarwarden.yaml").write_text("privacy:\n  email: refuse\n  phone: warn\n")
    rel = write(
        root,
        ep_path(demo_repo, "ep-privacy01"),
        episode_yaml("ep-privacy01", "mailed bob@acme.io, +1 415 555 0132"),
    )
    git(root, "add", rel)
    report = check_staged(open_repo(root))
    assert [p.code for p in report.problems] == ["personal-data"]
    assert [p.code for p in report.warnings] == ["personal-data"]
    assert "email address" in report.problems[0].message and "phone number" in report.warnings[0].message


def test_web_answer_form_refuses_a_secret(distilled) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("flask")
    from scarwarden.audit.web.app import create_app

    app = create_app(distilled.repo.root, csrf_token="t", allowed_hosts={"localhost"})
    client = app.test_client()
    before = head(distilled.repo.root)
    answer = "Log in with " + SECRETS["url-password"]
    r = client.post(
        "/answer",
        data={"csrf_token": "t", "task": "Book the venue", "answer": answer},
        headers={"Origin": "http://localhost"},
    )
    page = r.get_data(as_text=True)
    assert r.status_code == 400 and "password in a URL" in page
    assert answer.split("admin:")[1].split("@")[0] not in page
    assert head(distilled.repo.root) == before


@pytest.mark.slow
def test_pre_commit_framework_refuses_each_kind(framework, hook_repo, demo_repo: MemoryRepo) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """The framework's installed hook, through one real ``git commit`` staging an episode
    of each of 20 distinct kinds: it names every file (a framework run costs ~1 s)."""
    root = demo_repo.root
    path, sha = hook_repo
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n  - id: scarwarden-check\n"
    )
    git(root, "add", ".pre-commit-config.yaml")
    git(root, "commit", "-q", "-m", "use the gate via pre-commit")
    proc = framework(root, "install")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    before = head(root)
    distinct = {secret_scan.scan_text(text)[0].kind: (name, text) for name, text in SECRETS.items()}
    assert len(distinct) >= 20
    staged, out = _commit_one_episode_each(demo_repo, dict(list(distinct.values())[:20]), "ep-fwsecret{:03d}")
    assert "scarwarden provenance gate" in out and "Failed" in out
    assert head(root) == before
    for name, rel in staged.items():
        assert f"{rel}:5: field 'action': holds a secret: " in out, (name, out)


def test_review_shows_what_is_let_past_the_scanner(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    before = head(root)
    marked = episode_yaml("ep-allowrev01", SECRETS["npm-token"] + " (revoked; scarwarden:allow-secret)")
    rel = write(root, ep_path(demo_repo, "ep-allowrev01"), marked)
    (root / "scarwarden.yaml").write_text("secrets:\n  allow:\n    - 'sha256:0123456789ab'\n")
    git(root, "add", rel, "scarwarden.yaml")
    git(root, "commit", "-q", "-m", "a known false positive")
    review = json.loads(cli("review", "--base", before, "--json").stdout)
    messages = [w["message"] for w in review["warnings"]]
    assert any(rel in m and "scarwarden:allow-secret" in m for m in messages), messages
    assert any("secrets.allow now lets sha256:0123456789ab past the secret scanner" in m for m in messages)
