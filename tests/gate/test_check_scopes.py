"""``scarwarden check`` as a command: --staged/--all/--from-ref, JSON, the env range."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git
from helpers import NEW_ID, add_rule, commit_no_verify, episode_text, first_episode, write

from scarwarden.gate.check import check_all, check_range, check_staged
from scarwarden.repo import MemoryRepo


def test_clean_demo_passes_every_scope(cli, demo_repo: MemoryRepo) -> None:
    for args in ((), ("--staged",), ("--all",), ("--from-ref", "HEAD~1", "--to-ref", "HEAD")):
        result = cli("check", *args)
        assert result.exit_code == 0, (args, result.output)
        assert result.stdout.startswith("scarwarden check: OK"), result.stdout
    assert "34 episodes checked, 15 rules checked" in cli("check", "--all").stdout
    assert "2 images checked" in cli("check", "--all").stdout  # the demo's attachments (issue 19)


def test_staged_json_lists_every_problem_with_location(cli, demo_repo: MemoryRepo) -> None:
    rel = first_episode(demo_repo)
    (demo_repo.root / rel).write_text("id: broken\n")
    git(demo_repo.root, "add", rel, add_rule(demo_repo, ["ep-nosuch0001"]))
    result = cli("check", "--staged", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["scope"] == "staged" and report["base"] == "HEAD"
    by_code = {p["code"]: p for p in report["problems"]}
    assert set(by_code) == {"episode-modified", "citation-missing"}
    cite = by_code["citation-missing"]
    assert cite["file"] == "memory/playbook.md" and cite["rule"] == "PB-15"
    assert cite["episode"] == "ep-nosuch0001" and cite["field"] == "Learnt in"
    line = (demo_repo.root / "memory/playbook.md").read_text().splitlines()[cite["line"] - 1]
    assert line == "- Learnt in: ep-nosuch0001"
    assert by_code["episode-modified"]["file"] == rel and by_code["episode-modified"]["hint"]
    assert set(report["problems"][0]) == {
        "code",
        "file",
        "line",
        "field",
        "message",
        "hint",
        "rule",
        "episode",
        "commit",
    }


def test_staged_ignores_the_working_folder(demo_repo: MemoryRepo) -> None:
    # Unstaged damage is not what the commit would record: the hook must not see it.
    rel = first_episode(demo_repo)
    (demo_repo.root / rel).write_text("garbage: [\n")
    (demo_repo.root / demo_repo.playbook_rel).write_text("not a playbook\n")
    report = check_staged(demo_repo.root)
    assert report.ok and report.stats == {}
    assert report.summary() == "scarwarden check: OK, staged memory changes"


def test_check_all_reads_index_and_reports_the_whole_tree(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    rel = first_episode(demo_repo)
    (root / rel).write_text((root / rel).read_text().replace("tags:", "tagz:"))
    dup = write(
        root,
        f"{demo_repo.episodes_rel}/2026/12/{Path(rel).stem}.yaml",
        episode_text(Path(rel).stem, at="2026-12-01T09:00:00Z"),
    )
    write(root, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))  # untracked
    add_rule(demo_repo, [NEW_ID])
    git(root, "add", rel, dup, demo_repo.playbook_rel)
    report = check_all(root)
    codes = sorted(p.code for p in report.problems)
    assert codes == ["citation-missing", "episode-duplicate-id", "episode-invalid"], report.problems
    cite = next(p for p in report.problems if p.code == "citation-missing")
    assert "exists in the working folder but not in this commit" in (cite.hint or "")
    assert report.stats["episodes_checked"] == 35


def test_range_checks_every_commit_against_its_own_tree(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    base = git(root, "rev-parse", "HEAD").stdout.strip()
    rel = first_episode(demo_repo)
    (root / rel).write_text((root / rel).read_text() + "x-note: edited\n")
    bad = commit_no_verify(root, "edit an episode")
    git(root, "revert", "--no-edit", "HEAD")  # fixed later: still caught
    write(root, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    add_rule(demo_repo, ["ep-nosuch0001"])
    cite_bad = commit_no_verify(root, "rule citing nothing")
    add_rule(demo_repo, [NEW_ID], title="A second honest rule")
    commit_no_verify(root, "honest rule")
    report = check_range(root, base, "HEAD")
    assert report.stats["commits"] == 4
    found = [(p.code, p.commit) for p in report.problems]
    assert ("episode-modified", bad) in found
    assert ("citation-missing", cite_bad) in found
    # The revert re-modifies the same file: one problem per file, at the first commit.
    assert [c for c, _ in found].count("episode-modified") == 1
    result = cli("check", "--from-ref", base, "--to-ref", "HEAD")
    assert result.exit_code == 1
    assert f"[{bad[:10]}] {rel}: episode {Path(rel).stem} was modified" in result.stdout
    assert f"[{cite_bad[:10]}] memory/playbook.md:" in result.stdout
    # A range's hint fits a history: a later commit does not take the citation out.
    said = f"the citation is in commit {cite_bad[:10]}; a later commit recording ep-nosuch0001"
    assert said in result.stdout
    assert f"rewrite it (git rebase -i {cite_bad[:10]}^)" in result.stdout
    assert "commit it with the rule" not in result.stdout
    assert "problems in commits" in result.stdout


def test_range_from_pre_commit_env(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    base = git(root, "rev-parse", "HEAD").stdout.strip()
    add_rule(demo_repo, ["ep-nosuch0001"])
    bad = commit_no_verify(root, "bad rule")
    env = {"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": bad}
    result = cli("check", "--staged", env=env)  # the framework's entry still says --staged
    assert result.exit_code == 1
    assert "from PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF" in result.stderr
    assert "PB-15 cites ep-nosuch0001" in result.stdout
    # Without the variables, --staged checks the (clean) index.
    assert cli("check", "--staged").exit_code == 0


def test_range_with_merge_from_main_does_not_flag_merged_in_episodes(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    git(root, "checkout", "-q", "-b", "pr")
    pr_base = git(root, "rev-parse", "HEAD").stdout.strip()
    write(root, f"{demo_repo.episodes_rel}/2026/11/ep-prbranch01.yaml", episode_text("ep-prbranch01"))
    commit_no_verify(root, "pr episode")
    git(root, "checkout", "-q", "main")
    write(
        root,
        f"{demo_repo.episodes_rel}/2026/12/ep-mainside1.yaml",
        episode_text("ep-mainside1", at="2026-12-03T10:00:00Z"),
    )
    commit_no_verify(root, "main episode")
    git(root, "checkout", "-q", "pr")
    git(root, "merge", "-q", "--no-verify", "--no-edit", "main")
    add_rule(demo_repo, ["ep-prbranch01", "ep-mainside1"])
    commit_no_verify(root, "rule citing both sides")
    # The PR against main's current tip: main's episode comes in with the merge, and is
    # neither re-validated nor taken for a change to the ledger; the rule resolves.
    report = check_range(root, "main", "pr")
    assert report.ok, report.problems
    assert report.stats["commits"] == 3
    assert report.stats["episodes_added"] == 1
    assert report.stats["citations_checked"] == 2
    # From the older base, main's commit is in the range itself: each episode once.
    report = check_range(root, pr_base, "pr")
    assert report.ok, report.problems
    assert report.stats["commits"] == 4 and report.stats["episodes_added"] == 2


def test_usage_errors(cli, demo_repo: MemoryRepo) -> None:
    result = cli("check", "--all", "--from-ref", "HEAD")
    assert result.exit_code == 2 and "--all checks one tree; it cannot be combined" in result.stderr
    result = cli("check", "--staged", "--from-ref", "HEAD~1", "--to-ref", "HEAD")
    assert result.exit_code == 2 and "--staged checks one tree" in result.stderr
    result = cli("check", "--to-ref", "HEAD")
    assert result.exit_code == 2 and "--to-ref needs --from-ref" in result.stderr
    # Two scopes: neither wins silently (the last one given did), whatever their order.
    for both in (("--all", "--staged"), ("--staged", "--all")):
        result = cli("check", *both)
        assert result.exit_code == 2 and "--staged and --all are two scopes: give one" in result.stderr
        assert "OK" not in result.output
    # A ref that names no commit is a usage error (2), not a failed check (1).
    result = cli("check", "--from-ref", "no-such-ref")
    assert result.exit_code == 2, result.output
    assert "error: --from-ref no-such-ref: no such commit" in result.stderr
    assert "fetch-depth: 0" in result.stderr
    result = cli("check", "--from-ref", "HEAD", "--to-ref", "nope")
    assert result.exit_code == 2 and "--to-ref nope: no such commit" in result.stderr
    result = cli("verify", "no-such-ref..HEAD")
    assert result.exit_code == 2, result.output
    assert "error: cannot walk 'no-such-ref..HEAD'" in result.stderr


HEAVY_FOR_THE_HOOK = (
    "yaml",
    "scarwarden.yamlio",
    "scarwarden.files.episodes",
    "scarwarden.files.playbook",
    "scarwarden.gate.check_commits",
    "scarwarden.gate.check_tree",
    "logging",
    "secrets",
    "git",
    "requests",
)


def _hook_imports(root: Path) -> set[str]:
    """The modules a fresh ``python -m scarwarden check --staged`` process imported."""
    code = (
        "import runpy, sys\n"
        "sys.argv = ['scarwarden', 'check', '--staged']\n"
        "try:\n    runpy.run_module('scarwarden', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"print(sorted(m for m in sys.modules if m in {HEAVY_FOR_THE_HOOK!r}), "
        "file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert "scarwarden check: OK" in proc.stdout, proc.stdout + proc.stderr
    return set(ast.literal_eval(proc.stderr.strip().splitlines()[-1]))


def test_the_hook_imports_only_what_the_change_needs(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    (root / "notes.txt").write_text("not memory\n")
    git(root, "add", "notes.txt")
    # A commit that touches no memory (the common case in a code repository): no YAML.
    assert _hook_imports(root) == set()
    # One adding an episode validates YAML, but never parses the playbook nor mints an ID.
    write(root, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    git(root, "add", "-A", "memory")
    assert _hook_imports(root) == {"yaml", "scarwarden.yamlio", "scarwarden.files.episodes"}
    # With a rule citing it, the playbook is parsed too.
    git(root, "add", add_rule(demo_repo, [NEW_ID]))
    assert _hook_imports(root) == {
        "yaml",
        "scarwarden.yamlio",
        "scarwarden.files.episodes",
        "scarwarden.files.playbook",
    }


def test_outside_a_memory_repo_nothing_to_check(make_cli, git_repo: Path) -> None:
    # The hook may be installed before 'scarwarden init': it must not block other commits.
    (git_repo / "README").write_text("hi\n")
    git(git_repo, "add", "README")
    result = make_cli(git_repo)("check")
    assert result.exit_code == 0 and "OK" in result.stdout


def test_demo_section_shows_accept_and_reject(demo_repo: MemoryRepo) -> None:
    from scarwarden.demo.sections import gate_section as demo_section

    lines: list[str] = []
    before = git(demo_repo.root, "rev-list", "--count", "HEAD").stdout.strip()
    demo_section(demo_repo, lines.append)
    story = "\n".join(lines)
    assert story.count(": accepted") == 2
    assert "hint: no provenance, no rule" in story
    assert "REJECTED by the hook" in story
    assert "PB-16 cites ep-n0such0ep1, which is not an episode in the tree being committed" in story
    after = git(demo_repo.root, "rev-list", "--count", "HEAD").stdout.strip()
    assert int(after) == int(before) + 2  # the episode and the honest rule; not the bogus one
    assert "ep-n0such0ep1" not in (demo_repo.root / demo_repo.playbook_rel).read_text()
    assert git(demo_repo.root, "status", "--porcelain", "--", "memory").stdout == ""


def test_problem_line_is_the_learnt_in_line_even_after_a_hashtag(demo_repo: MemoryRepo) -> None:
    # A line starting with '#launchday' is rule text (the parser agrees), not the next
    # heading: the problem must still point at the rule's own 'Learnt in' line.
    path = demo_repo.playbook_path
    path.write_text(
        path.read_text() + "\n## PB-15: Tag launch posts\n\nUse the launch "
        "hashtag.\n\n#launchday goes last.\n\n- Tags: launch\n"
        "- Learnt in: ep-nosuch0001\n"
    )
    git(demo_repo.root, "add", demo_repo.playbook_rel)
    report = check_staged(demo_repo.root)
    [problem] = report.problems
    assert problem.code == "citation-missing" and problem.rule == "PB-15"
    assert path.read_text().splitlines()[problem.line - 1] == "- Learnt in: ep-nosuch0001"
    assert check_all(demo_repo.root).problems[0].line == problem.line


def test_check_json_is_utf8_with_a_path_that_is_not(demo_repo: MemoryRepo) -> None:
    # A file name in Latin-1 came out as its raw byte: the whole document invalid UTF-8.
    name = os.fsencode(demo_repo.root / "memory/episodes") + b"/caf\xe9.yaml"
    with open(name, "w") as f:
        f.write("x: 1\n")
    subprocess.run(["git", "add", "-A", "memory"], cwd=demo_repo.root, check=True)
    result = subprocess.run(
        [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), "check", "--json"],
        capture_output=True,
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout.decode("utf-8"))  # strict: no stray byte
    files = {os.fsencode(p["file"]) for p in report["problems"]}
    assert b"memory/episodes/caf\xe9.yaml" in files
