"""``scarwarden init``: layout, ignore rule, commit; refusals; leaving no trace on failure."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from conftest import git, head

from scarwarden.errors import GitError, UsageError
from scarwarden.files.scaffold import EMPTY_PLAYBOOK, demo_memory_dir, init
from scarwarden.repo import open_repo


def tree(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if ".git" not in p.relative_to(root).parts and ".scarwarden" not in p.relative_to(root).parts
    )


def test_init_creates_layout_ignores_cache_and_commits(git_repo: Path) -> None:
    repo = open_repo(git_repo, initialised=False)
    result = init(repo)
    assert result.files == ["memory/episodes/.gitkeep", "memory/playbook.md", ".gitignore", ".gitattributes"]
    assert (git_repo / "memory/playbook.md").read_text() == EMPTY_PLAYBOOK
    assert (git_repo / ".gitignore").read_text() == ".scarwarden/\n"
    assert (git_repo / ".gitattributes").read_text() == "memory/media/** binary\n"
    assert result.commit == git(git_repo, "rev-parse", "HEAD").stdout.strip()
    assert git(git_repo, "log", "-1", "--format=%s").stdout.strip() == "scarwarden: initialise memory"
    shown = git(git_repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert sorted(shown) == sorted(result.files)
    assert git(git_repo, "status", "--porcelain").stdout == ""
    # the index cache is ignored by the rule init wrote
    open_repo(git_repo)  # initialised now
    (git_repo / ".scarwarden").mkdir(exist_ok=True)
    (git_repo / ".scarwarden" / "index.db").write_bytes(b"x")
    assert git(git_repo, "status", "--porcelain").stdout == ""


def test_existing_gitignore_is_extended_once(git_repo: Path) -> None:
    (git_repo / ".gitignore").write_text("*.pyc")  # no trailing newline
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore")
    init(open_repo(git_repo, initialised=False))
    assert (git_repo / ".gitignore").read_text() == "*.pyc\n.scarwarden/\n"
    other = git_repo.parent / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / ".gitignore").write_text("build/\n.scarwarden/\n")
    result = init(open_repo(other, initialised=False))
    assert ".gitignore" not in result.files
    assert (other / ".gitignore").read_text() == "build/\n.scarwarden/\n"


def test_gitignore_that_is_not_utf8_or_crlf_keeps_its_bytes(git_repo: Path) -> None:
    original = b"caf\xe9/\r\n*.log"  # Latin-1, CRLF, no final newline
    (git_repo / ".gitignore").write_bytes(original)
    init(open_repo(git_repo, initialised=False))
    # The line ends as the file's lines do: a CRLF file stays CRLF (it got a lone LF).
    assert (git_repo / ".gitignore").read_bytes() == original + b"\r\n.scarwarden/\r\n"
    other = git_repo.parent / "crlf"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / ".gitignore").write_bytes(b".scarwarden/\r\nbuild/\r\n")
    assert ".gitignore" not in init(open_repo(other, initialised=False)).files


def test_memory_path_that_is_a_file_is_refused(git_repo: Path, make_cli) -> None:
    (git_repo / "memory").write_text("my notes\n")
    result = make_cli(git_repo)("init", "--no-hooks")
    assert result.exit_code == 2
    assert "memory in" in result.stderr and "is a file, not a folder" in result.stderr
    assert (git_repo / "memory").read_text() == "my notes\n"
    assert not (git_repo / ".gitignore").exists()


def test_init_in_a_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    result = init(open_repo(tmp_path, initialised=False), demo=True)
    assert git(tmp_path, "rev-list", "--count", "HEAD").stdout.strip() == "1"
    # 34 episodes, 2 images (issue 19), the playbook, .gitignore, .gitattributes.
    assert result.commit is not None and len(result.files) == 34 + 2 + 3


def test_demo_memory_matches_the_package_copy(git_repo: Path) -> None:
    result = init(open_repo(git_repo, initialised=False), demo=True)
    source = demo_memory_dir()
    shipped = sorted(p.relative_to(source).as_posix() for p in source.rglob("*.yaml"))
    written = sorted(f.removeprefix("memory/") for f in result.files if f.endswith(".yaml"))
    assert written == shipped and len(shipped) == 34
    images = sorted(p.relative_to(source).as_posix() for p in (source / "media").iterdir())
    assert sorted(f.removeprefix("memory/") for f in result.files if "/media/" in f) == images
    assert len(images) == 2  # the two visual episodes' attachments (issue 19)
    for rel in shipped + images + ["playbook.md"]:
        assert (git_repo / "memory" / rel).read_bytes() == (source / rel).read_bytes()
    assert not (git_repo / "memory/episodes/.gitkeep").exists()


def test_no_commit_stages_the_layout(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD").stdout.strip()
    result = init(open_repo(git_repo, initialised=False), commit=False)
    assert result.commit is None
    assert git(git_repo, "rev-parse", "HEAD").stdout.strip() == head
    staged = git(git_repo, "diff", "--cached", "--name-only").stdout.split()
    assert sorted(staged) == sorted(result.files)


def test_refuses_where_memory_exists(demo_repo, make_cli) -> None:
    before = (git(demo_repo.root, "rev-parse", "HEAD").stdout, tree(demo_repo.root))
    with pytest.raises(UsageError) as exc:
        init(demo_repo)
    assert exc.value.message == f"memory/ already holds a Scarwarden memory in {demo_repo.root}"
    # Issue 28: through the CLI, a second 'init --demo' on the demo changes nothing and
    # says so with exit 0 (tests/cli/test_consistency.py has the refusals).
    result = make_cli(demo_repo.root)("init", "--demo", "--no-hooks")
    assert result.exit_code == 0
    assert "already holds a Scarwarden memory" in result.stdout and "nothing to do" in result.stdout
    assert (git(demo_repo.root, "rev-parse", "HEAD").stdout, tree(demo_repo.root)) == before
    # a playbook alone (episodes folder removed by hand) still counts as a memory
    other = open_repo(demo_repo.root)
    import shutil

    shutil.rmtree(other.episodes_dir)
    with pytest.raises(UsageError):
        init(other)


def test_refuses_outside_git(tmp_path: Path, make_cli) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = make_cli(plain)("init", "--no-hooks")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {plain} is not inside a git repository",
        # The test's CLI passes --repo: the hint names that folder (issue 28).
        f"hint: run 'git init {plain}' first, or give -C/--repo a git repository",
    ]
    assert list(plain.iterdir()) == []


def test_a_rejected_commit_leaves_the_repository_as_it_was(git_repo: Path) -> None:
    # The user's own files: a tracked .gitignore with a staged edit, and notes in memory/.
    (git_repo / ".gitignore").write_text("*.log\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore logs")
    (git_repo / ".gitignore").write_text("*.log\n*.tmp\n")
    git(git_repo, "add", ".gitignore")
    (git_repo / "memory").mkdir()
    (git_repo / "memory" / "NOTES.md").write_text("my notes, not Scarwarden's\n")
    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'rejected by policy' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    status = git(git_repo, "status", "--porcelain", "--untracked-files=all").stdout
    staged = git(git_repo, "diff", "--cached").stdout
    files = tree(git_repo)
    with pytest.raises(GitError, match="rejected by policy"):
        init(open_repo(git_repo, initialised=False), demo=True)
    assert tree(git_repo) == files
    assert (git_repo / "memory" / "NOTES.md").read_text() == "my notes, not Scarwarden's\n"
    assert (git_repo / ".gitignore").read_text() == "*.log\n*.tmp\n"
    assert git(git_repo, "diff", "--cached").stdout == staged
    assert git(git_repo, "status", "--porcelain", "--untracked-files=all").stdout == status


def test_init_cli_then_reads_work(git_repo: Path, make_cli) -> None:
    cli = make_cli(git_repo)
    result = cli("init", "--demo", "--no-hooks", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["demo"] is True and data["hook"] is None and len(data["files"]) == 34 + 2 + 3
    assert data["commit"] == git(git_repo, "rev-parse", "HEAD").stdout.strip()
    rules = json.loads(cli("rule", "list", "--json").stdout)
    assert [r["id"] for r in rules][:3] == ["PB-01", "PB-02", "PB-03"]
    audit = cli("rule", "show", "PB-02")
    assert audit.exit_code == 0
    assert "task: Promote the summer sale on Twitter with the code LOOP30" in audit.stdout
    assert "introduced" in audit.stdout and "scarwarden: initialise demo memory" in audit.stdout
    assert len(json.loads(cli("episode", "list", "--json").stdout)) == 34


def test_init_plain_text_output(git_repo: Path, make_cli) -> None:
    result = make_cli(git_repo)("init", "--no-hooks")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"Initialised an empty memory in {git_repo / 'memory'}"
    assert lines[1].startswith("Committed 4 file(s) as ")
    assert json.loads(make_cli(git_repo)("rule", "list", "--json").stdout) == []


def test_custom_memory_dir_from_settings(git_repo: Path, make_cli) -> None:
    (git_repo / "scarwarden.yaml").write_text("memory_dir: agent/memory\n")
    cli = make_cli(git_repo)
    assert cli("init", "--no-hooks").exit_code == 0
    assert (git_repo / "agent/memory/playbook.md").read_text() == EMPTY_PLAYBOOK
    added = cli("episode", "add", "--task", "t", "--outcome", "o", "--at", "2026-05-01T00:00:00Z")
    ep_id = added.stdout.strip()
    assert (git_repo / f"agent/memory/episodes/2026/05/{ep_id}.yaml").is_file()
    assert json.loads(cli("episode", "list", "--json").stdout)[0]["id"] == ep_id


@pytest.mark.parametrize("how", ["deleted", "sparse"])
def test_refuses_where_the_last_commit_has_a_memory_the_working_tree_lacks(
    demo_repo, make_cli, how: str
) -> None:
    # The memory folder deleted by hand, or left out of a sparse checkout: init used to
    # see no memory and commit an empty playbook over the committed one, dropping every
    # rule (a commit 'verify' then calls dishonest; no hook installed to stop it).
    root = demo_repo.root
    if how == "deleted":
        import shutil

        shutil.rmtree(root / "memory")
    else:
        git(root, "sparse-checkout", "set", "--no-cone", "/*", "!/memory/")
    before = (head(root), git(root, "status", "--porcelain").stdout, tree(root))
    result = make_cli(root)("init", "--no-hooks")
    assert result.exit_code == 2, result.output
    assert "memory/ is missing from the working tree, while the last commit has it" in result.stderr
    assert ("git sparse-checkout add memory" if how == "sparse" else "git restore") in result.stderr
    assert (head(root), git(root, "status", "--porcelain").stdout, tree(root)) == before


def test_a_memory_dir_with_a_space_gets_attribute_lines_git_can_read(git_repo: Path, make_cli) -> None:
    # "agent memory/media/** binary" reads, to git, as the pattern "agent" and an
    # attribute "memory/media/**": git warned "is not a valid attribute name" on every
    # command, and the playbook's merge driver never applied.
    (git_repo / "scarwarden.yaml").write_text('memory_dir: "agent memory"\n')
    cli = make_cli(git_repo)
    assert cli("init", "--no-hooks").exit_code == 0
    assert (git_repo / ".gitattributes").read_text() == '"agent memory/media/**" binary\n'
    said = git(
        git_repo,
        "check-attr",
        "merge",
        "binary",
        "--",
        "agent memory/playbook.md",
        "agent memory/media/a.png",
    )
    assert said.stdout.splitlines() == [
        "agent memory/playbook.md: merge: scarwarden",
        "agent memory/playbook.md: binary: unspecified",
        "agent memory/media/a.png: merge: unset",
        "agent memory/media/a.png: binary: set",
    ]
    assert "not a valid attribute name" not in said.stderr
    assert cli("hooks", "uninstall").exit_code == 0
    assert "merge=scarwarden" not in (git_repo / ".git/info/attributes").read_text()


def test_refuses_where_the_last_commit_has_a_submodule_named_like_the_memory(
    git_repo: Path, make_cli
) -> None:
    # init wrote its files into the submodule's folder and failed in git's words
    # ("'memory/episodes/.gitkeep' appears as both a file and as a directory", exit 1).
    git(git_repo, "update-index", "--add", "--cacheinfo", f"160000,{head(git_repo)},memory")
    git(git_repo, "commit", "-qm", "a submodule called memory")
    (git_repo / "memory").mkdir()
    before = (head(git_repo), git(git_repo, "status", "--porcelain").stdout, tree(git_repo))
    result = make_cli(git_repo)("init", "--no-hooks")
    assert result.exit_code == 2, result.output
    assert "memory in the last commit is a submodule or a file, not a folder" in result.stderr
    assert "memory_dir" in result.stderr
    assert (head(git_repo), git(git_repo, "status", "--porcelain").stdout, tree(git_repo)) == before
