"""Every local write door runs the gate's own check, hooks installed or not (issue 27).

The repositories here have no hooks (as after ``init`` without a terminal): before
issue 27, an ``episode add`` with a receipt recalled for another task committed, and
``check --all`` and ``verify`` failed on the append-only ledger from then on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, git

from scarwarden.errors import ExitCode, ValidationError
from scarwarden.repo import MemoryRepo

RECALLED = "Post our discount code on Twitter"
OTHER = "Draft the webinar invitation for the newsletter"


def no_hooks(repo: MemoryRepo) -> None:
    hooks = Path(git(repo.root, "rev-parse", "--git-path", "hooks").stdout.strip())
    hooks = hooks if hooks.is_absolute() else repo.root / hooks
    assert not any(
        (hooks / name).exists() for name in ("pre-commit", "reference-transaction", "commit-msg")
    ), "these tests are about repositories without hooks"


def other_task_receipt(cli: Cli) -> dict[str, Any]:
    out = cli("recall", "--json", RECALLED)
    assert out.exit_code == 0, out.output
    receipt: dict[str, Any] = json.loads(out.stdout)["receipt"]
    return receipt


def state(repo: MemoryRepo) -> tuple[str, str, list[str]]:
    """HEAD, git status and the episode files: what a refused write must leave alone."""
    head = git(repo.root, "rev-parse", "HEAD").stdout.strip()
    status = git(repo.root, "status", "--porcelain", "--untracked-files=all").stdout
    files = sorted(p.name for p in repo.episodes_dir.rglob("*.yaml"))
    return head, status, files


def assert_refused_as_other_task(output: str) -> None:
    assert "does not pass the provenance gate; nothing was written or committed" in output
    assert "is for another task" in output
    # The fix is named: record the recalled task, or recall this one.
    assert "recall the episode's task and pass that receipt" in output


def assert_ledger_still_checks(cli: Cli) -> None:
    out = cli("check", "--all")
    assert out.exit_code == 0, out.output
    out = cli("verify")
    assert out.exit_code == 0, out.output


def test_episode_add_with_a_receipt_for_another_task_writes_nothing(cli: Cli, demo_repo: MemoryRepo) -> None:
    no_hooks(demo_repo)
    receipt = other_task_receipt(cli)
    before = state(demo_repo)
    out = cli("episode", "add", "--task", OTHER, "--action", "Wrote it", "--receipt", json.dumps(receipt))
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert_refused_as_other_task(out.output)
    assert "Traceback" not in out.output
    assert state(demo_repo) == before
    assert_ledger_still_checks(cli)


def test_a_batch_with_one_bad_receipt_writes_none_of_it(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    receipt = other_task_receipt(cli)
    batch = [
        {"task": "A harmless first episode", "action": "Did it"},
        {"task": OTHER, "action": "Wrote it", "recalled": receipt},
    ]
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(batch))
    before = state(demo_repo)
    out = cli("episode", "add", "--file", str(path))
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert_refused_as_other_task(out.output)
    assert "the batch does not pass" in out.output
    assert state(demo_repo) == before
    assert_ledger_still_checks(cli)


def test_no_commit_stages_nothing_the_gate_refuses(cli: Cli, demo_repo: MemoryRepo) -> None:
    receipt = other_task_receipt(cli)
    before = state(demo_repo)
    out = cli(
        "episode", "add", "--no-commit", "--task", OTHER, "--action", "x", "--receipt", json.dumps(receipt)
    )
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert_refused_as_other_task(out.output)
    assert state(demo_repo) == before
    assert not git(demo_repo.root, "diff", "--cached", "--name-only").stdout


def test_an_honest_receipt_still_commits(cli: Cli, demo_repo: MemoryRepo) -> None:
    receipt = other_task_receipt(cli)
    before = state(demo_repo)[0]
    out = cli(
        "episode", "add", "--task", RECALLED, "--action", "Kept it out", "--receipt", json.dumps(receipt)
    )
    assert out.exit_code == 0, out.output
    assert state(demo_repo)[0] != before
    assert_ledger_still_checks(cli)


def test_rule_add_refuses_to_commit_a_staged_episode_the_gate_refuses(
    cli: Cli, demo_repo: MemoryRepo
) -> None:
    """``rule add`` commits the staged episodes it cites: the gate judges them too."""
    receipt = other_task_receipt(cli)
    # Staged by hand (git add: no hook runs), as a user without hooks would.
    from helpers import write_episode

    rel = write_episode(demo_repo, "ep-d00r000001", task=OTHER, action="x", recalled=receipt)
    git(demo_repo.root, "add", rel)
    before = state(demo_repo)
    pb_before = demo_repo.playbook_path.read_bytes()
    out = cli(
        "rule",
        "add",
        "--text",
        "Always give webinar times in UTC.",
        "--tag",
        "webinar",
        "--cites",
        "ep-d00r000001",
    )
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert "the rule does not pass the provenance gate" in out.output
    assert "is for another task" in out.output
    assert state(demo_repo) == before
    assert demo_repo.playbook_path.read_bytes() == pb_before


def test_the_answer_doors_refuse_a_receipt_for_another_task(cli: Cli, demo_repo: MemoryRepo) -> None:
    """``ask``, MCP's ``ask_human_answer`` and the web form record through one function."""
    from scarwarden.answers.asking import record_human_answer

    receipt = other_task_receipt(cli)
    before = state(demo_repo)
    with pytest.raises(ValidationError) as caught:
        record_human_answer(demo_repo, OTHER, "Use UTC", receipt=receipt)
    assert "the answer does not pass the provenance gate" in caught.value.message
    assert any("is for another task" in p.message for p in caught.value.problems)
    assert state(demo_repo) == before


def test_the_web_form_refuses_a_receipt_for_another_task(cli: Cli, demo_repo: MemoryRepo) -> None:
    pytest.importorskip("flask")
    from scarwarden.audit.web.app import create_app

    receipt = other_task_receipt(cli)
    client = create_app(demo_repo.root, csrf_token="t0k", allowed_hosts={"localhost"}).test_client()
    before = state(demo_repo)
    r = client.post(
        "/answer",
        data={"csrf_token": "t0k", "task": OTHER, "answer": "Use UTC", "receipt": json.dumps(receipt)},
        headers={"Origin": "http://localhost"},
    )
    assert r.status_code == 400
    page = r.get_data(as_text=True)
    # The page refuses it before the gate, in its own words (the gate's named the CLI's).
    assert "is the recall of another task" in page and "recall the task again on the task page" in page
    assert state(demo_repo) == before


# -- rules_applied naming a rule this memory never had ---------------------------------


def test_episode_add_refuses_an_unknown_rule(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = state(demo_repo)
    out = cli("episode", "add", "--task", OTHER, "--action", "x", "--rule-applied", "PB-99")
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert "rules_applied names a rule this memory never had; nothing was written" in out.output
    assert "PB-99 is not a rule in memory/playbook.md" in out.output
    assert "source: import" in out.output  # the way in for imported episodes is named
    assert state(demo_repo) == before


def test_a_batch_with_an_unknown_rule_writes_none_of_it(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_text(
        json.dumps({"task": "fine", "action": "x", "rules_applied": ["PB-01"]})
        + "\n"
        + json.dumps({"task": "not fine", "action": "x", "rules_applied": ["PB-77"]})
        + "\n"
    )
    before = state(demo_repo)
    out = cli("episode", "add", "--file", str(path))
    assert out.exit_code == ExitCode.CHECK_FAILED, out.output
    assert "PB-77 is not a rule" in out.output and "PB-01 is not" not in out.output
    assert state(demo_repo) == before


def test_an_imported_episode_may_name_another_memorys_rules(cli: Cli, demo_repo: MemoryRepo) -> None:
    out = cli(
        "episode", "add", "--task", OTHER, "--action", "x", "--rule-applied", "PB-99", "--source", "import"
    )
    assert out.exit_code == 0, out.output
    assert "warning:" in out.stderr and "PB-99 is not a rule" in out.stderr


def test_the_api_flag_lets_an_importer_through(demo_repo: MemoryRepo) -> None:
    from scarwarden.files.record import add_episodes

    warned: list[str] = []
    [ep] = add_episodes(
        demo_repo,
        [{"task": OTHER, "action": "x", "rules_applied": ["PB-98"]}],
        allow_unknown_rules=True,
        warn=lambda p: warned.append(str(p)),
    )
    assert ep.get("rules_applied") == ["PB-98"]
    assert any("PB-98 is not a rule" in w for w in warned)
    with pytest.raises(ValidationError, match="never had"):
        add_episodes(demo_repo, [{"task": OTHER, "action": "y", "rules_applied": ["PB-98"]}])


def test_commit_gpgsign_is_honoured_by_the_write_doors(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    # The doors commit with 'git commit-tree', which reads no commit.gpgSign: with it
    # set, every episode, rule and init commit went in unsigned, silently (and with no
    # gpg at all, where 'git commit' fails, they still "succeeded").
    root = demo_repo.root
    gpg = tmp_path / "gpg"
    gpg.write_text(
        "#!/bin/sh\ncat >/dev/null\necho '[GNUPG:] SIG_CREATED D 1 8 00 0 0' >&2\n"
        "printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nfake\\n-----END PGP SIGNATURE-----\\n'\n"
    )
    gpg.chmod(0o755)
    git(root, "config", "commit.gpgSign", "yes")
    git(root, "config", "gpg.program", str(gpg))
    added = cli("episode", "add", "--task", "Sign it", "--outcome", "signed")
    assert added.exit_code == 0, added.output
    assert "gpgsig -----BEGIN PGP SIGNATURE-----" in git(root, "cat-file", "-p", "HEAD").stdout
    git(root, "config", "gpg.program", str(tmp_path / "no-gpg"))
    before = git(root, "rev-parse", "HEAD").stdout, git(root, "status", "--porcelain").stdout
    refused = cli("episode", "add", "--task", "Sign it again", "--outcome", "not signed")
    assert refused.exit_code == 1, refused.output
    assert "gpg failed to sign the data" in refused.stderr and "internal error" not in refused.stderr
    assert (git(root, "rev-parse", "HEAD").stdout, git(root, "status", "--porcelain").stdout) == before
