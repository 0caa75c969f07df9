"""``git replace`` of an episode's blob changes nothing Scarwarden prints or judges: every
git process it starts reads objects as stored (issue 15)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import Cli, git

from scarwarden.repo import MemoryRepo


def test_a_replaced_episode_blob_changes_neither_show_nor_the_gate(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    added = cli("episode", "add", "--task", "Pay the invoice", "--correction", "Ask finance first", "--json")
    assert added.exit_code == 0, added.output
    ep = json.loads(added.stdout)["id"]
    rel = git(root, "ls-files", f"*{ep}.yaml").stdout.strip()
    blob = git(root, "rev-parse", f"HEAD:{rel}").stdout.strip()
    forged_text = git(root, "show", f"HEAD:{rel}").stdout.replace("Ask finance first", "Pay at once")
    forged = _hash(root, forged_text)
    git(root, "replace", blob, forged)
    # Plain git now shows the forged text: the test can fail.
    assert "Pay at once" in git(root, "show", f"HEAD:{rel}").stdout

    cli("index", "--rebuild")
    shown = cli("episode", "show", ep)
    assert shown.exit_code == 0, shown.output
    assert "Ask finance first" in shown.stdout and "Pay at once" not in shown.stdout
    as_json = json.loads(cli("episode", "show", ep, "--json").stdout)
    assert as_json["correction"] == "Ask finance first"

    # The gate reads the stored blob too: a range, the whole tree and history.
    assert cli("check", "--all").exit_code == 0
    verified = cli("verify", "--json")
    problems = json.loads(verified.stdout)["problems"]
    assert [p["code"] for p in problems] == ["object-replaced"]  # reported, not believed


def _hash(root: Path, text: str) -> str:
    proc = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=root,
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()
