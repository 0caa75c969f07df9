"""``redact``, ``export --commit`` and ``init`` commit as every write does (issue 15):
journalled, through a temporary index and a compare-and-swap of HEAD. What the user
staged stays staged and out of the commit, a refusing hook leaves every file as it was
(bytes the index did not hold included), and a killed run is undone by the next."""

from __future__ import annotations

import stat
from pathlib import Path

from conftest import Cli, git, head

from scarwarden.files import write_journal
from scarwarden.files.atomic import atomic_write
from scarwarden.files.write_journal import Planned
from scarwarden.repo import MemoryRepo

EP = "ep-hkgnqdz88f"  # a committed demo episode


def _hook(root: Path, name: str, body: str) -> None:
    path = root / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all").stdout


def _no_leftovers(root: Path) -> None:
    assert not any(p.name.startswith("scarwarden-") or p.suffix == ".lock" for p in (root / ".git").iterdir())
    assert not (root / ".scarwarden" / write_journal.JOURNAL).exists()


def test_redact_keeps_the_users_staging_and_a_killed_redact_is_undone(
    demo_repo: MemoryRepo, cli: Cli
) -> None:
    root = demo_repo.root
    rel = git(root, "ls-files", f"memory/episodes/**/{EP}.yaml").stdout.strip()
    old = (root / rel).read_bytes()
    # A killed redact: its journal and the stub written, nothing committed.
    write_journal.begin(demo_repo, [Planned(rel, b"redacted: half\n")])
    atomic_write(root / rel, b"redacted: half\n")
    (root / "mine.txt").write_text("staged by the user\n")
    git(root, "add", "mine.txt")
    before = head(root)

    result = cli("redact", EP, "--reason", "quoted a customer ticket", "--json")
    assert result.exit_code == 0, result.output
    assert git(root, "rev-parse", "HEAD~1").stdout.strip() == before
    committed = git(root, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert rel in committed and "mine.txt" not in committed and len(committed) == 2
    assert _status(root).splitlines() == ["A  mine.txt"]
    assert (root / rel).read_bytes() != old and b"redacted:" in (root / rel).read_bytes()
    _no_leftovers(root)


def test_a_refused_redact_leaves_everything_as_it_was(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    rel = git(root, "ls-files", f"memory/episodes/**/{EP}.yaml").stdout.strip()
    old = (root / rel).read_bytes()
    _hook(root, "pre-commit", "echo 'refused by policy' >&2\nexit 1\n")
    before = head(root)
    result = cli("redact", EP, "--reason", "quoted a customer ticket")
    assert result.exit_code != 0 and "refused by policy" in result.stderr
    assert "Traceback" not in result.output
    assert head(root) == before and (root / rel).read_bytes() == old
    assert _status(root) == ""
    _no_leftovers(root)


def test_a_refused_export_commit_puts_back_the_users_unstaged_edit(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    assert cli("export", "agents-md", "--commit").exit_code == 0
    # The user's unstaged edit outside the markers; then the playbook changes.
    edited = b"# My notes (not staged)\n\n" + (root / "AGENTS.md").read_bytes()
    (root / "AGENTS.md").write_bytes(edited)
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0
    _hook(root, "pre-commit", "echo 'refused by policy' >&2\nexit 1\n")
    before = head(root)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code != 0 and "refused by policy" in result.stderr
    assert head(root) == before
    assert (root / "AGENTS.md").read_bytes() == edited  # the bytes, not the index's
    _no_leftovers(root)
    # Without the hook it commits AGENTS.md alone; what the user staged stays staged.
    (root / ".git" / "hooks" / "pre-commit").unlink()
    (root / "mine.txt").write_text("staged\n")
    git(root, "add", "mine.txt")
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    assert git(root, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["AGENTS.md"]
    assert not git(root, "show", "HEAD:AGENTS.md").stdout.startswith("# My notes")  # its section only
    assert (root / "AGENTS.md").read_bytes().startswith(b"# My notes (not staged)")
    assert _status(root).splitlines() == [" M AGENTS.md", "A  mine.txt"]


def test_init_without_a_commit_yet_keeps_the_users_staged_file_out(tmp_path: Path, make_cli) -> None:
    root = tmp_path / "fresh"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "draft.txt").write_text("mine\n")
    git(root, "add", "draft.txt")
    (root / ".gitignore").write_bytes(b"*.log\r\n")  # untracked, CRLF: its bytes must survive
    _hook(root, "pre-commit", "echo 'refused by policy' >&2\nexit 1\n")
    cli = make_cli(root)
    refused = cli("init", "--no-hooks")
    assert refused.exit_code != 0 and "refused by policy" in refused.stderr
    assert git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0  # still unborn
    assert (root / ".gitignore").read_bytes() == b"*.log\r\n"
    assert not (root / "memory").exists()
    assert _status(root).splitlines() == ["A  draft.txt", "?? .gitignore"]
    _no_leftovers(root)

    (root / ".git" / "hooks" / "pre-commit").unlink()
    result = cli("init", "--no-hooks")
    assert result.exit_code == 0, result.output
    committed = git(root, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert "draft.txt" not in committed and "memory/playbook.md" in committed
    assert (root / ".gitignore").read_bytes() == b"*.log\r\n.scarwarden/\r\n"  # committed: status is clean
    assert _status(root).splitlines() == ["A  draft.txt"]
    _no_leftovers(root)


def test_a_killed_init_is_undone_by_the_next(git_repo: Path, make_cli) -> None:
    from scarwarden.repo import open_repo

    repo = open_repo(git_repo, initialised=False)
    half = [Planned(repo.playbook_rel, b"# half\n"), Planned(".gitignore", b".scarwarden/\n")]
    write_journal.begin(repo, half)
    for item in half:
        atomic_write(git_repo / item.path, item.data)
    result = make_cli(git_repo)("init", "--no-hooks")
    assert result.exit_code == 0, result.output
    assert git(git_repo, "rev-list", "--count", "HEAD").stdout.strip() == "2"
    assert _status(git_repo) == ""
    _no_leftovers(git_repo)


def test_no_commit_staging_killed_either_side_of_the_index_write(demo_repo: MemoryRepo, cli: Cli) -> None:
    from scarwarden.git import index_commit

    root = demo_repo.root
    landed, lost = "memory/episodes/2031/01/ep-stagedk111.yaml", "memory/episodes/2031/02/ep-stagedk222.yaml"
    for rel in (landed, lost):
        record = write_journal.begin(demo_repo, [Planned(rel, b"id: x\n")], new=True)
        atomic_write(root / rel, b"id: x\n")
        entries = index_commit.entries_of(root, [rel])
        record["staged"] = [[e.mode, e.blob, e.path] for e in entries]
        write_journal._save(demo_repo, record)  # what write_journal.stage records first
        if rel == landed:
            index_commit.stage(root, entries)  # killed after the index write: kept, staged
            assert write_journal.recover(demo_repo) == "rolled forward"
        else:  # killed before it: the file goes
            assert write_journal.recover(demo_repo) == "rolled back"
    assert _status(root).splitlines() == [f"A  {landed}"]
    assert not (root / lost).exists() and not (root / "memory/episodes/2031/02").exists()
    # --no-commit stages through the same step; nothing else is left.
    result = cli("episode", "add", "--no-commit", "--task", "Staged", "--correction", "Stage it", "--json")
    assert result.exit_code == 0, result.output
    assert len(_status(root).splitlines()) == 2 and all(
        line.startswith("A  ") for line in _status(root).splitlines()
    )
    _no_leftovers(root)
