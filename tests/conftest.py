"""Shared fixtures: real git repositories in temporary folders, never $HOME.

Every test runs with a fixed git identity and an isolated HOME/XDG/PRE_COMMIT_HOME so
nothing reads or writes the developer's own configuration.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result
from fakellm import FakeLLM

from scarwarden.cli.group import main_group
from scarwarden.files.scaffold import init as init_memory
from scarwarden.repo import MemoryRepo, open_repo

if TYPE_CHECKING:
    from distilled_repo import Distilled

ROOT = Path(__file__).resolve().parent.parent


#: The identity every test commits as (and the template repositories are built with).
IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
}

#: Settings of the developer's own that must not reach the tests.
UNSET = (
    "SCARWARDEN_API_KEY",
    # Each provider's own key picks that provider when nothing else is set (issue 28).
    "DASHSCOPE_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "SCARWARDEN_BASE_URL",
    "SCARWARDEN_MODEL_DISTILL",
    "SCARWARDEN_MODEL_ANSWER",
    # A developer's own settings must not reach the tests: SCARWARDEN_PROVIDER=ollama
    # alone would make every "no model configured" test call a local server.
    "SCARWARDEN_PROVIDER",
    "SCARWARDEN_MODEL_VISION",
    "SCARWARDEN_TIMEOUT",
    "SCARWARDEN_MAX_RETRIES",
    "SCARWARDEN_SKIP",
    "SCARWARDEN_READ_ONLY",
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
)


def _isolate(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME, git's global configuration and the pre-commit cache under ``home``."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home / ".pre-commit"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for var, value in IDENTITY.items():
        monkeypatch.setenv(var, value)
    for var in UNSET:
        monkeypatch.delenv(var, raising=False)
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[user]\n\tname = Test Author\n\temail = author@example.com\n"
    )


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # Not mktemp("home"): to number a new folder it lists the whole base folder, which
    # holds every test's folders so far (~1 ms a call late in a worker's run, ~1.2 s a
    # worker); the homes live in a folder of their own, each named by mkdtemp.
    homes = tmp_path_factory.getbasetemp() / "homes"
    homes.mkdir(exist_ok=True)
    _isolate(Path(tempfile.mkdtemp(prefix="home-", dir=homes)), monkeypatch)


def git(
    cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run real git in ``cwd``; returns the completed process (text mode)."""
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True, env=env)


def head(where: Path | MemoryRepo) -> str:
    """The commit ``HEAD`` names in a repository (a folder or a MemoryRepo)."""
    root = where.root if isinstance(where, MemoryRepo) else where
    return git(root, "rev-parse", "HEAD").stdout.strip()


def _make_git_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "root")
    return path


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """An empty git repository with one empty commit."""
    return _make_git_repo(tmp_path / "repo")


class _Templates:
    """Repositories built once per test process and copied for each test (issue 28: the
    demo memory's 34 episodes cost a git commit and ~0.5 s to lay out; a copy ~30 ms).

    Built under the same isolated environment as a test (fixed identity, no user
    configuration); a copy is a real repository like the one built in place, with the
    same commits (same IDs: the commit times are those of the template).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.built: dict[str, Path] = {}
        self.distilled: Distilled | None = None

    def path(self, kind: str) -> Path:
        if kind not in self.built:
            with pytest.MonkeyPatch.context() as mp:
                home = self.root / f"home-{kind}"
                home.mkdir()
                _isolate(home, mp)
                self.built[kind] = self._build(kind)
        return self.built[kind]

    def _build(self, kind: str) -> Path:
        path = self.root / kind / "repo"
        if kind == "distilled":
            from distilled_repo import build_distilled_repo  # it imports this module's helpers

            shutil.copytree(self.path("demo"), path, symlinks=True)
            self.distilled = build_distilled_repo(open_repo(path))
            return path
        path.parent.mkdir()
        init_memory(open_repo(_make_git_repo(path), initialised=False), demo=kind == "demo")
        return path

    def copy(self, kind: str, to: Path) -> Path:
        """``to`` (an existing folder is replaced) as a copy of the ``kind`` template."""
        if to.exists():
            shutil.rmtree(to)
        shutil.copytree(self.path(kind), to, symlinks=True)
        # A copy keeps the files' times but not their inodes: refresh git's index, or
        # plumbing (diff-files) would see every file as changed.
        git(to, "update-index", "-q", "--refresh", check=False)
        return to


@pytest.fixture(scope="session")
def _templates(tmp_path_factory: pytest.TempPathFactory) -> _Templates:
    return _Templates(tmp_path_factory.mktemp("templates"))


def _copy_to(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where a template copy goes: the test's ``git_repo`` when it uses one too (the same
    repository, as before), else the same path without the ``git init`` and commit the
    copy would replace (~6 ms of two git processes, in most tests of the suite)."""
    if "git_repo" in request.fixturenames:
        return Path(request.getfixturevalue("git_repo"))
    return tmp_path / "repo"


@pytest.fixture
def memory_repo(request: pytest.FixtureRequest, tmp_path: Path, _templates: _Templates) -> MemoryRepo:
    """A git repository initialised with an empty memory (committed)."""
    return open_repo(_templates.copy("memory", _copy_to(request, tmp_path)))


@pytest.fixture
def demo_repo(request: pytest.FixtureRequest, tmp_path: Path, _templates: _Templates) -> MemoryRepo:
    """A git repository initialised with the bundled demo memory (committed)."""
    return open_repo(_templates.copy("demo", _copy_to(request, tmp_path)))


class Cli:
    """Runs ``scarwarden`` in-process through click's CliRunner against one repo."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def __call__(
        self, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
    ) -> Result:
        return self.runner.invoke(
            main_group, ["--repo", str(self.root), *args], input=input, env=env, catch_exceptions=False
        )


@pytest.fixture
def cli(demo_repo: MemoryRepo) -> Cli:
    return Cli(demo_repo.root)


@pytest.fixture
def make_cli() -> type[Cli]:
    return Cli


@pytest.fixture
def chdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    yield lambda p: monkeypatch.chdir(p)


#: Free space a RAM disk needs before the tests' temporary folders go there (a whole run
#: writes about 1 GB; a container's default 64 MB /dev/shm is left alone).
_RAM_DISK_ROOM = 4 * 1024**3


def _temporary_folders_in_memory() -> None:
    """The run's temporary folders on a RAM disk, when there is one with room.

    A run makes ~260k files in a thousand git repositories, and the product fsyncs what
    it writes (files/atomic.py, SQLite): on a virtual disk the workers waited on that
    I/O, measured here at 4:43 wall for 3:38 of CPU per worker; with the temporary
    folders in /dev/shm, 3:44. ``TMPDIR`` set by the user (or CI) is kept as it is; the
    subprocesses the tests start inherit the choice. The durability itself is tested by
    kill -9 (tests/bench/test_kill_bench.py), which a RAM disk does not weaken.
    """
    shm = Path("/dev/shm")
    if os.environ.get("TMPDIR") or not shm.is_dir() or not os.access(shm, os.W_OK):
        return
    try:
        room = shutil.disk_usage(shm).free
    except OSError:
        return
    if room < _RAM_DISK_ROOM:
        return
    folder = shm / f"scarwarden-tests-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.environ["TMPDIR"] = str(folder)
    import tempfile

    tempfile.tempdir = None  # read TMPDIR again


def pytest_configure(config: pytest.Config) -> None:
    """The package's bytecode, compiled once for the run when Python may not write it.

    With ``PYTHONDONTWRITEBYTECODE`` set (CI sets it; so do some machines) every
    ``scarwarden`` the tests start (a thousand a run, most of them git hooks) compiled
    the package's modules it imports from source again, ~80 ms of CPU each, and each
    worker compiled them all once more. The controller compiles them once before any
    worker starts, and removes at the end the ``__pycache__`` folders it made, so the
    checkout is left as the setting asks.
    """
    if hasattr(config, "workerinput"):
        return
    _temporary_folders_in_memory()
    if not sys.flags.dont_write_bytecode:
        return
    import compileall
    import re

    made: list[Path] = []
    # The tests' and benches' helper modules too (test modules are pytest's to rewrite).
    for folder in (ROOT / "scarwarden", ROOT / "tests", ROOT / "bench"):
        before = set(folder.rglob("__pycache__"))
        compileall.compile_dir(folder, quiet=2, rx=re.compile(r"[/\\](test_[^/\\]*|conftest)\.py$"))
        made += [p for p in folder.rglob("__pycache__") if p not in before]
    config.stash[_MADE_PYCACHE] = made


_MADE_PYCACHE = pytest.StashKey[list[Path]]()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that hold a ``slow`` test first, then the rest, most tests first.

    With ``--dist loadscope`` a module is one worker's, handed out in this order as
    workers free up (``--no-loadscope-reorder`` in pyproject: xdist's own reorder counts
    tests only, so a one-test, 25-second module went last and ran alone while the other
    worker sat idle). Long modules started first overlap, and the many short ones fill
    in behind them (longest first, the classic schedule). The order within a module is
    unchanged, and a run without xdist runs the same tests.
    """

    def module(item: pytest.Item) -> str:
        return str(getattr(getattr(item, "module", None), "__name__", ""))

    slow = {module(item) for item in items if item.get_closest_marker("slow")}
    count = Counter(module(item) for item in items)
    items.sort(key=lambda item: (module(item) not in slow, -count[module(item)]))


def pytest_report_header(config: pytest.Config) -> str:
    return f"scarwarden tests; git {os.popen('git --version').read().strip()}"


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """A running FakeLLM with SCARWARDEN_BASE_URL and an API key pointing at it."""
    from fakellm import FakeLLM

    with FakeLLM() as llm:
        monkeypatch.setenv("SCARWARDEN_BASE_URL", llm.url)
        monkeypatch.setenv("SCARWARDEN_API_KEY", "sk-test-not-a-real-key")
        yield llm


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    """A real local HTTP server speaking the chat completions API, with scripted replies."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
def distilled(demo_repo: MemoryRepo, _templates: _Templates) -> Distilled:
    """The demo memory, three new episodes, then a distill commit (tests/distilled_repo.py)."""
    _templates.copy("distilled", demo_repo.root)
    assert _templates.distilled is not None
    return dataclasses.replace(_templates.distilled, repo=open_repo(demo_repo.root))


def pytest_unconfigure(config: pytest.Config) -> None:
    """A closing line nobody can miss when the browser tests skipped (issue 18).

    ``-ra`` lists skips among dozens of lines; a web UI that went untested deserves the
    very last word of the run (after the totals line, hence unconfigure rather than
    ``pytest_terminal_summary``), with how to get the browser.
    """
    for made in config.stash.get(_MADE_PYCACHE, []):
        shutil.rmtree(made, ignore_errors=True)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    skipped = [r for r in reporter.stats.get("skipped", []) if "browser" in r.keywords]
    if not skipped:
        return
    longrepr = skipped[0].longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    reporter.write_sep(
        "!",
        f"WEB UI UNTESTED: {len(skipped)} browser tests skipped ({reason}); "
        "get Chromium with `apt-get install chromium` (Debian/Ubuntu) and run pytest again",
        yellow=True,
        bold=True,
    )
