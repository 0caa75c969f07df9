"""The same kind of mistake gets the same kind of answer (issue 28, point 8): a missing
--attach exits 2 like a missing --file; a second init that would change nothing succeeds;
an --at in the future is refused unless asked; -C with a bad path says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import git, head
from helpers import new_memory

from scarwarden.repo import MemoryRepo


def test_a_missing_attach_exits_2_like_a_missing_file(cli: Any, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    attach = cli("episode", "add", "--task", "Card", "--correction", "Crop", "--attach", "nope.png")
    file = cli("episode", "add", "--file", "nope.jsonl")
    assert (attach.exit_code, file.exit_code) == (2, 2)
    assert "'--attach': File 'nope.png' does not exist" in attach.output
    assert head(demo_repo) == before


def test_a_second_init_says_so_and_succeeds(tmp_path: Path) -> None:
    root, cli = new_memory(tmp_path)
    before = head(root)
    again = cli("init", "--no-hooks")
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith(f"memory/ already holds a Scarwarden memory in {root}: nothing to do")
    data = json.loads(cli("init", "--json").stdout)
    assert data["already_initialised"] is True and data["commit"] is None and data["files"] == []
    hooked = cli("init", "--hooks")  # what is missing is still done
    assert hooked.exit_code == 0 and "Installed the pre-commit gate" in hooked.stdout
    assert head(root) == before
    # Asking for the demo where another memory is would change it: still refused.
    demo = cli("init", "--demo", "--no-hooks")
    assert demo.exit_code == 2 and "already holds a Scarwarden memory" in demo.stderr
    assert head(root) == before


def test_an_at_in_the_future_is_refused_unless_asked(cli: Any, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    args = ("episode", "add", "--task", "Plan the offsite", "--outcome", "Booked")
    future = cli(*args, "--at", "2099-01-01T00:00:00Z")
    assert future.exit_code == 2
    assert "--at 2099-01-01T00:00:00Z is in the future" in future.stderr
    assert "--allow-future" in future.stderr
    assert head(demo_repo) == before
    allowed = cli(*args, "--at", "2099-01-01T00:00:00Z", "--allow-future", "--json")
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout)["at"] == "2099-01-01T00:00:00Z"
    assert cli(*args, "--at", "2020-01-01T00:00:00Z").exit_code == 0  # the past is fine


def test_an_import_at_in_the_future_is_refused_unless_asked(
    cli: Any, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    # 'episode import --at 2099-...' was accepted: the year kept for good in the ledger.
    runs = tmp_path / "runs.jsonl"
    messages = [{"role": "user", "content": "Plan the offsite"}, {"role": "assistant", "content": "Booked"}]
    runs.write_text(json.dumps(messages) + "\n")
    before = head(demo_repo)
    args = ("episode", "import", "--format", "openai-chat", str(runs))
    future = cli(*args, "--at", "2099-01-01T00:00:00Z")
    assert future.exit_code == 2, future.output
    assert "--at 2099-01-01T00:00:00Z is in the future" in future.stderr
    assert head(demo_repo) == before
    allowed = cli(*args, "--at", "2099-01-01T00:00:00Z", "--allow-future", "--json")
    assert allowed.exit_code == 0, allowed.output
    assert head(demo_repo) != before


def test_a_bad_repo_path_is_named_without_telling_to_pass_it(tmp_path: Path, make_cli: Any) -> None:
    from click.testing import CliRunner

    from scarwarden.cli.group import main_group

    runner = CliRunner()
    missing = runner.invoke(main_group, ["-C", str(tmp_path / "nope"), "recall", "x"])
    assert missing.exit_code == 2
    assert f"error: {tmp_path / 'nope'}: no such folder (given with -C/--repo)" in missing.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    not_git = runner.invoke(main_group, ["--repo", str(plain), "recall", "x"])
    assert not_git.exit_code == 2
    assert f"run 'git init {plain}' first" in not_git.stderr
    assert "pass --repo PATH" not in missing.stderr + not_git.stderr


def test_a_missing_image_for_audit_image_exits_2_like_a_missing_attach(cli: Any, tmp_path: Path) -> None:
    missing = cli("audit-image", str(tmp_path / "nope.png"), "--task", "Beta banner")
    assert missing.exit_code == 2 and "does not exist" in missing.output
    folder = cli("audit-image", str(tmp_path), "--task", "Beta banner")
    assert folder.exit_code == 2 and "is a directory" in folder.output


def test_init_demo_over_another_memory_says_where_the_demo_can_go(tmp_path: Path) -> None:
    """The refusal's hint said 'nothing to do' on an exit 2: a newcomer who asked for the
    demo was not told how to get it."""
    root, cli = new_memory(tmp_path)
    before = head(root)
    demo = cli("init", "--demo", "--no-hooks")
    assert demo.exit_code == 2
    assert f"memory/ already holds a Scarwarden memory in {root}, not the demo's" in demo.stderr
    assert "nothing to do" not in demo.stderr
    assert (
        "hint: the demo memory goes in a new git repository of its own: git init ~/sw-demo && "
        "scarwarden -C ~/sw-demo init --demo"
    ) in demo.stderr
    assert head(root) == before and git(root, "status", "--porcelain").stdout == ""


def test_init_after_hooks_install_does_not_ask_for_the_gate_again(tmp_path: Path, make_cli: Any) -> None:
    """'hooks install' then 'init' ended with 'Next: ... scarwarden hooks install': a
    newcomer was sent to install what was installed."""
    root, cli = new_memory(tmp_path, "hooks", "install")
    result = cli("init", "--no-hooks")
    assert result.exit_code == 0, result.output
    assert "scarwarden hooks install" not in result.stdout
    assert f"The provenance gate is installed: {root / '.git' / 'hooks' / 'pre-commit'}" in result.stdout
    other = tmp_path / "s"
    other.mkdir()
    git(other, "init", "-q")
    assert "scarwarden hooks install   (the provenance gate" in make_cli(other)("init", "--no-hooks").stdout


def test_init_no_commit_says_to_commit_before_the_next_step(tmp_path: Path, make_cli: Any) -> None:
    """After 'init --no-commit' the next step shown was 'episode add'; the distill that
    follows then refuses ('memory/playbook.md has uncommitted changes')."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    result = make_cli(root)("init", "--no-commit", "--no-hooks")
    assert result.exit_code == 0, result.output
    assert "Next: git commit -m 'scarwarden: initialise memory'   (the staged files)" in result.stdout
    assert git(root, "status", "--porcelain").stdout.count("A  ") == 4  # staged, not committed
