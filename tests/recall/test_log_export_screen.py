"""``scarwarden log --export`` screens what it shares as the ledger screens episodes.

The recall log keeps each task exactly as it was asked (it is local, and receipts are
resolved from it); the export is what leaves the machine, so a credential in a task
(or in any other text a line carries) is replaced by a placeholder there, and personal
data is handled as ``privacy:`` has the ledger handle it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Cli, git
from fake_secrets import fake_secrets
from helpers import CARD, EMAIL, set_privacy

from scarwarden.index import open_index
from scarwarden.recall.engine import recall_task
from scarwarden.recall.log import read_log
from scarwarden.repo import MemoryRepo


def _export(cli: Cli) -> tuple[list[dict[str, Any]], str]:
    result = cli("log", "--export")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()], result.stderr


def test_export_replaces_a_credential_in_a_task_and_says_so(
    cli: Cli, demo_repo: MemoryRepo, make_cli: type[Cli], tmp_path: Path
) -> None:
    secret = fake_secrets()["github-token"]
    token = secret.split()[-1]
    recall_task(demo_repo, f"Deploy the site, {secret}")
    recall_task(demo_repo, "Draft a LinkedIn post announcing our beta")
    result = cli("log", "--export")
    assert result.exit_code == 0, result.output
    assert token not in result.stdout
    redacted, clean = (json.loads(line) for line in result.stdout.splitlines())
    assert redacted["task"] == "[redacted github-token]"
    # The receipt's hash covers the task: it cannot be shared without it, nor altered.
    assert "receipt" not in redacted["detail"] and redacted["detail"]["redacted"] == ["github-token"]
    assert clean["task"] == "Draft a LinkedIn post announcing our beta" and "receipt" in clean["detail"]
    assert "1 of 2 recall(s) had a credential or personal data replaced" in result.stderr
    # The local log keeps the exact text (and the receipt, for episode add --receipt).
    with open_index(demo_repo) as index:
        assert token in read_log(index, limit=None)[1].task
    # What was shared imports into another clone as it is.
    exported = tmp_path / "recalls.jsonl"
    exported.write_text(result.stdout)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    other_cli = make_cli(other)
    assert other_cli("init").exit_code == 0
    imported = other_cli("log", "--import", str(exported), "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout) == {"added": 2, "skipped": 0}


def test_export_screens_every_text_a_line_carries(cli: Cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """A line imported from another clone may carry any text in ``detail``."""
    recall_task(demo_repo, "Draft a LinkedIn post announcing our beta")
    line, _ = _export(cli)
    secret = fake_secrets()["slack-webhook"]
    other = {**line[0], "at": "2026-11-20T10:00:00Z", "detail": {"notes": ["fine", secret]}}
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text(json.dumps(other) + "\n")
    assert cli("log", "--import", str(theirs)).exit_code == 0
    lines, stderr = _export(cli)
    assert secret.split()[-1] not in json.dumps(lines)
    assert lines[0]["detail"]["notes"] == ["fine", "[redacted slack-webhook]"]
    assert lines[0]["task"] == other["task"] and "1 of 2 recall(s)" in stderr


def test_an_allowed_value_is_exported_as_the_ledger_would_keep_it(cli: Cli, demo_repo: MemoryRepo) -> None:
    secret = fake_secrets()["github-token"]
    recall_task(demo_repo, f"Rotate the revoked sample, {secret} (scarwarden:allow-secret)")
    lines, stderr = _export(cli)
    assert secret in lines[0]["task"] and "receipt" in lines[0]["detail"]
    assert "replaced" not in stderr


def test_export_handles_personal_data_as_the_privacy_setting_says(cli: Cli, demo_repo: MemoryRepo) -> None:
    task = f"Refund {EMAIL}, card {CARD}"
    recall_task(demo_repo, task)
    lines, stderr = _export(cli)  # the defaults: email off, card warn
    assert lines[0]["task"] == task and "receipt" in lines[0]["detail"]
    assert "1 exported recall(s) hold personal data that privacy: warn lets through" in stderr
    set_privacy(demo_repo, email="refuse", card="warn")
    lines, stderr = _export(cli)
    assert lines[0]["task"] == f"Refund [email], card {CARD}"
    assert lines[0]["detail"]["redacted"] == ["email"] and "receipt" not in lines[0]["detail"]
    assert "1 of 1 recall(s) had a credential or personal data replaced" in stderr
    assert "privacy: warn lets through" in stderr
    set_privacy(demo_repo, email="warn", card="refuse")
    lines, stderr = _export(cli)
    assert lines[0]["task"] == f"Refund {EMAIL}, card [card]" and "privacy: warn lets through" in stderr


def test_a_redacted_line_of_ours_imported_back_adds_nothing_twice(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """A clone's export that holds our lines (redacted on the way out) merges nothing twice."""
    recall_task(demo_repo, f"Deploy the site, {fake_secrets()['github-token']}")
    recall_task(demo_repo, "Draft a LinkedIn post announcing our beta")
    exported = tmp_path / "ours.jsonl"
    exported.write_text(cli("log", "--export").stdout)
    result = cli("log", "--import", str(exported), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"added": 0, "skipped": 2}
    with open_index(demo_repo) as index:
        assert len(read_log(index, limit=None)) == 2
