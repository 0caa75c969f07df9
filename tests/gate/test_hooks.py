"""``scarwarden hooks install/uninstall``: chaining, idempotence, core.hooksPath."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from conftest import ROOT, git
from helpers import add_rule
from terminal import run_on_terminal

from scarwarden.gate.hooks import HOOK_TYPES, MARKER, REF_HOOK_TYPES, install, render_hook, uninstall
from scarwarden.repo import MemoryRepo

FOREIGN = "#!/bin/sh\necho 'LEGACY HOOK RAN' >&2\nexit {code}\n"


def hooks_of(root: Path) -> Path:
    return root / ".git" / "hooks"


def make_hook(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def test_install_writes_executable_hooks_using_this_interpreter(demo_repo: MemoryRepo) -> None:
    path = install(demo_repo.root)
    assert path == hooks_of(demo_repo.root) / "pre-commit"
    for name in HOOK_TYPES:
        hook = hooks_of(demo_repo.root) / name
        text = hook.read_text()
        assert MARKER in text and f"INSTALL_PYTHON={sys.executable}" in text
        assert hook.stat().st_mode & stat.S_IXUSR
    first = path.read_text()
    assert install(demo_repo.root) == path  # idempotent: no legacy made of our own hook
    assert path.read_text() == first
    assert not list(hooks_of(demo_repo.root).glob("*.legacy"))


def test_foreign_hook_is_kept_chained_and_restored(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    make_hook(hooks_of(root) / "pre-commit", FOREIGN.format(code=0))
    install(root)
    legacy = hooks_of(root) / "pre-commit.legacy"
    assert legacy.read_text() == FOREIGN.format(code=0)
    install(root)  # again: the legacy hook is neither lost nor chained twice
    assert legacy.read_text() == FOREIGN.format(code=0)

    # Legacy passes, gate rejects: the commit fails, and both ran (legacy first).
    git(root, "add", add_rule(demo_repo, ["ep-nosuch0001"]))
    proc = git(root, "commit", "-m", "bad", check=False)
    assert proc.returncode == 1
    assert proc.stderr.index("LEGACY HOOK RAN") < proc.stderr.index("PB-15 cites ep-nosuch0001")

    # Legacy fails, gate passes: the commit fails too.
    git(root, "reset", "-q", "--hard")
    make_hook(legacy, FOREIGN.format(code=3))
    (root / "notes.txt").write_text("hi\n")
    git(root, "add", "notes.txt")
    proc = git(root, "commit", "-m", "legacy says no", check=False)
    assert proc.returncode == 1 and "LEGACY HOOK RAN" in proc.stderr
    assert "scarwarden check: OK" in proc.stderr

    result = uninstall(root)
    assert result.removed == [hooks_of(root) / name for name in HOOK_TYPES + REF_HOOK_TYPES]
    assert result.restored == [hooks_of(root) / "pre-commit"]
    assert (hooks_of(root) / "pre-commit").read_text() == FOREIGN.format(code=3)
    assert not legacy.exists() and not (hooks_of(root) / "pre-merge-commit").exists()
    assert uninstall(root).removed == []


def test_refuses_to_clobber_when_legacy_exists_too(demo_repo: MemoryRepo, cli) -> None:
    root = demo_repo.root
    make_hook(hooks_of(root) / "pre-commit", FOREIGN.format(code=0))
    make_hook(hooks_of(root) / "pre-commit.legacy", FOREIGN.format(code=1))
    result = cli("hooks", "install")
    assert result.exit_code == 2
    assert "pre-commit.legacy exists already" in result.stderr
    assert (hooks_of(root) / "pre-commit").read_text() == FOREIGN.format(code=0)
    assert not (hooks_of(root) / "pre-merge-commit").exists()  # nothing half-done


def test_core_hooks_path_refused_unless_asked(demo_repo: MemoryRepo, cli) -> None:
    root = demo_repo.root
    git(root, "config", "core.hooksPath", "team-hooks")
    result = cli("hooks", "install")
    assert result.exit_code == 2
    assert "Cowardly refusing to install the hook with core.hooksPath set (team-hooks)" in result.stderr
    assert "--hooks-path-ok" in result.stderr
    assert not (root / "team-hooks").exists()

    make_hook(root / "team-hooks" / "pre-commit", FOREIGN.format(code=0))
    result = cli("hooks", "install", "--hooks-path-ok")
    assert result.exit_code == 0, result.output
    assert str(root / "team-hooks" / "pre-commit") in result.stdout
    assert "Kept the previous hook" in result.stdout
    git(root, "add", add_rule(demo_repo, ["ep-nosuch0001"]))
    proc = git(root, "commit", "-m", "bad", check=False)
    assert proc.returncode == 1
    assert "LEGACY HOOK RAN" in proc.stderr and "PB-15 cites ep-nosuch0001" in proc.stderr

    result = cli("hooks", "uninstall")
    assert "Restored the previous hook" in result.stdout
    assert (root / "team-hooks" / "pre-commit").read_text() == FOREIGN.format(code=0)


def test_hook_falls_back_to_path_and_fails_closed(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    root = demo_repo.root
    hook = hooks_of(root) / "pre-commit"
    make_hook(hook, render_hook("/nonexistent/python"))
    git(root, "add", add_rule(demo_repo, ["ep-nosuch0001"]))
    # No interpreter, nothing on PATH: the gate refuses rather than letting it through.
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}
    proc = git(root, "commit", "-m", "x", check=False, env=bare)
    assert proc.returncode == 1 and "cannot run the provenance gate" in proc.stderr
    # `scarwarden` on PATH is used when the installing interpreter is gone.
    shim = tmp_path / "bin" / "scarwarden"
    make_hook(shim, f'#!/bin/sh\nexec {sys.executable} -m scarwarden "$@"\n')
    proc = git(root, "commit", "-m", "x", check=False, env={**bare, "PATH": f"{shim.parent}:/usr/bin:/bin"})
    assert proc.returncode == 1 and "PB-15 cites ep-nosuch0001" in proc.stderr


def test_project_hook_scripts_are_the_template() -> None:
    for name in HOOK_TYPES:
        script = ROOT / "hooks" / name
        assert script.read_text() == render_hook(None)
        assert script.stat().st_mode & stat.S_IXUSR


def test_init_hooks_installs_the_gate(make_cli, git_repo: Path) -> None:
    result = make_cli(git_repo)("init", "--demo", "--hooks")
    assert result.exit_code == 0, result.output
    assert "Installed the pre-commit gate" in result.stdout
    assert MARKER in (hooks_of(git_repo) / "pre-commit").read_text()


def test_init_hooks_refused_by_core_hooks_path_still_initialises(make_cli, git_repo: Path) -> None:
    git(git_repo, "config", "core.hooksPath", "team-hooks")
    result = make_cli(git_repo)("init", "--hooks")
    assert result.exit_code == 2
    assert result.stdout.startswith(f"Initialised an empty memory in {git_repo / 'memory'}")
    assert "Cowardly refusing to install the hook with core.hooksPath set" in result.stderr
    assert "The memory is initialised; the gate was not installed." in result.stderr
    assert git(git_repo, "log", "-1", "--format=%s").stdout.strip() == "scarwarden: initialise memory"
    assert not (git_repo / "team-hooks").exists()
    data = json.loads(make_cli(git_repo)("hooks", "install", "--hooks-path-ok", "--json").stdout)
    team = git_repo / "team-hooks"
    assert data.pop("merge_driver").endswith(" -m scarwarden merge-playbook %O %A %B %P")
    assert data.pop("ref_hooks") == [str(team / "reference-transaction"), str(team / "pre-push")]
    assert data == {"hooks": [str(team / "pre-commit"), str(team / "pre-merge-commit")], "legacy": []}
    data = json.loads(make_cli(git_repo)("hooks", "uninstall", "--json").stdout)
    assert [d.split(" from ")[0] for d in data.pop("merge_driver")] == [
        "'/memory/playbook.md merge=scarwarden'",
        "merge.scarwarden",
    ]
    assert data == {
        "removed": [str(team / n) for n in HOOK_TYPES + REF_HOOK_TYPES],
        "restored": [],
        "foreign": [],
    }


def test_init_without_a_terminal_suggests_the_hook(make_cli, git_repo: Path) -> None:
    result = make_cli(git_repo)("init")  # CliRunner's stdin is not a terminal: no prompt
    assert result.exit_code == 0
    assert "scarwarden hooks install" in result.stdout
    assert not (hooks_of(git_repo) / "pre-commit").exists()


def test_init_offers_the_hook_on_a_terminal(git_repo: Path) -> None:
    """A real pseudo-terminal: init asks, 'y' installs the gate."""
    code, text, answered = run_on_terminal(
        [sys.executable, "-m", "scarwarden", "-C", str(git_repo), "init"], b"pre-commit hook? [Y/n]", b"y\n"
    )
    assert answered and code == 0, text
    assert "Installed the pre-commit gate at" in text
    assert MARKER in (hooks_of(git_repo) / "pre-commit").read_text()


def test_a_repository_whose_path_is_not_utf8(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    # A folder named in Latin-1 (Linux allows any bytes): every command run in it, and
    # the hook itself, failed with "internal error: UnicodeDecodeError" reading git's answer.
    import subprocess

    root = tmp_path / os.fsdecode(b"m\xe9moire")
    git(tmp_path, "clone", "-q", str(demo_repo.root), str(root))

    def scarwarden(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "scarwarden", *args],
            cwd=root,
            capture_output=True,
            text=True,
            errors="replace",
        )

    for command in (["hooks", "install"], ["check", "--all"], ["verify"]):
        proc = scarwarden(*command)
        assert proc.returncode == 0, proc.stderr
    episode = next((root / "memory" / "episodes").rglob("*.yaml"))
    episode.write_text(episode.read_text() + "outcome: changed later\n")
    proc = git(root, "commit", "-qam", "edit an episode", check=False)
    assert proc.returncode == 1
    assert "the ledger is append-only" in proc.stderr and "internal error" not in proc.stderr
    git(root, "checkout", "-q", "--", "memory")
    remote = tmp_path / os.fsdecode(b"d\xe9p\xf4t.git")
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "set-url", "origin", str(remote))
    proc = scarwarden("sync")
    assert proc.returncode == 0, proc.stderr
    assert git(remote, "rev-parse", "main").stdout == git(root, "rev-parse", "HEAD").stdout


def test_a_repository_without_memory_commits_in_silence(tmp_path: Path, make_cli) -> None:
    # Hooks installed, no memory/ folder: nothing of the memory is checked, so the hook
    # says nothing (it printed "OK, staged memory changes" on every commit), and the
    # command says what is true.
    root = tmp_path / "code"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    install(root)
    for name in ("first.txt", "second.txt"):  # before the first commit, then with a HEAD
        (root / name).write_text("code\n")
        git(root, "add", name)
        proc = git(root, "commit", "-q", "-m", f"add {name}", check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout + proc.stderr == "", proc.stdout + proc.stderr
    for scope in ("--staged", "--all"):
        result = make_cli(root)("check", scope)
        assert result.exit_code == 0, result.output
        assert result.stdout == "scarwarden check: OK, no memory to check (no memory/ folder in git)\n"
        report = json.loads(make_cli(root)("check", scope, "--json").stdout)
        assert report["ok"] and report["summary"] == result.stdout.strip()


def test_a_memory_commit_before_init_is_still_checked(tmp_path: Path) -> None:
    root = tmp_path / "code"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    install(root)
    (root / "memory").mkdir()
    (root / "memory" / "playbook.md").write_text("not a playbook\n")
    git(root, "add", "memory")
    proc = git(root, "commit", "-q", "-m", "memory by hand", check=False)
    assert proc.returncode == 1 and "must start with '# Playbook'" in proc.stdout + proc.stderr


def test_a_folder_or_fifo_where_a_hook_should_be_is_refused_and_nothing_written(
    demo_repo: MemoryRepo, make_cli
) -> None:
    # A folder was moved to pre-commit.legacy and "kept; it runs first": the hook then
    # ran it ("pre-commit.legacy: Permission denied" on every commit). A FIFO hung.
    root = demo_repo.root
    for make in (os.mkdir, os.mkfifo):
        target = hooks_of(root) / "pre-commit"
        make(target)
        before = sorted(p.name for p in hooks_of(root).iterdir())
        result = make_cli(root)("hooks", "install")
        assert result.exit_code == 2, result.output
        assert f"{target} is not a file" in result.output and "move it away" in result.output
        assert sorted(p.name for p in hooks_of(root).iterdir()) == before
        target.rmdir() if target.is_dir() else target.unlink()


def test_uninstall_leaves_a_fifo_alone_instead_of_hanging(demo_repo: MemoryRepo, make_cli) -> None:
    root = demo_repo.root
    install(root)
    (hooks_of(root) / "pre-push").unlink()
    os.mkfifo(hooks_of(root) / "pre-push")
    result = uninstall(root)  # read the FIFO to look for our marker: blocked for ever
    assert hooks_of(root) / "pre-push" in result.foreign
    assert hooks_of(root) / "pre-commit" in result.removed
    assert stat.S_ISFIFO((hooks_of(root) / "pre-push").lstat().st_mode)
