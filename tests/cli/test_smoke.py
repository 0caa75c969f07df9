from __future__ import annotations

import json

from scarwarden.repo import MemoryRepo


def test_demo_rule_list_json(cli, demo_repo: MemoryRepo) -> None:
    result = cli("rule", "list", "--json")
    assert result.exit_code == 0, result.output
    rules = json.loads(result.output)
    assert rules[0]["id"] == "PB-01"
    assert set(rules[0]) == {"id", "title", "text", "tags", "episode_ids"}
    assert len(rules) >= 10


def test_episode_add_commits_only_its_file(cli, demo_repo: MemoryRepo) -> None:
    other = demo_repo.root / "notes.txt"
    other.write_text("unrelated\n")
    import subprocess

    subprocess.run(["git", "add", "notes.txt"], cwd=demo_repo.root, check=True)
    result = cli(
        "episode",
        "add",
        "--task",
        "Write the webinar invite",
        "--correction",
        "Always give the timezone",
        "--tag",
        "webinar,Timezone",
    )
    assert result.exit_code == 0, result.output
    ep_id = result.stdout.strip()
    show = cli("episode", "show", ep_id, "--json")
    data = json.loads(show.stdout)
    assert data["tags"] == ["webinar", "timezone"]
    log = subprocess.run(
        ["git", "log", "-1", "--format=%B", "--name-only"],
        cwd=demo_repo.root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"Scarwarden-Episode: {ep_id}" in log
    assert "notes.txt" not in log
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"],
        cwd=demo_repo.root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert staged.strip() == "notes.txt"
