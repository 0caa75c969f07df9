"""The corpus of bad inputs (tests/hardening/corpus/, written by make_corpus.py), each
fed through every door that takes it, asserting the message, the exit code, and that
HEAD, ``git status --porcelain`` and every file are unchanged.

* ``episode/``: ``episode add --file PATH`` and ``--file -`` (stdin); MCP
  ``record_episode`` (the tools class the server wraps) for the cases that are one
  JSON-able mapping; the web UI's answer form for the cases whose bad value is the task.
* ``stored/``: planted in the ledger and staged: the pre-commit gate (``check``)
  refuses it and the index (``episode list``) skips it with a warning.
* ``playbook/``: as ``memory/playbook.md``: ``rule list`` and, staged, ``check``.

One repository per group serves every case: a refusal writes nothing, which is what
each case asserts before the next one runs.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from scarwarden.cli.commands._common import MAX_TAGS
from scarwarden.cli.group import main_group
from scarwarden.errors import ScarwardenError
from scarwarden.files.scaffold import init as init_memory
from scarwarden.repo import MemoryRepo, open_repo

CORPUS = Path(__file__).resolve().parent / "corpus"


def _cases(group: str) -> list[tuple[str, list[Any]]]:
    expected = json.loads((CORPUS / group / "EXPECTED.json").read_text())
    return sorted(expected.items())


EPISODE_CASES = _cases("episode")
STORED_CASES = _cases("stored")
PLAYBOOK_CASES = _cases("playbook")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def snapshot(root: Path) -> tuple[str, str, dict[str, str]]:
    """HEAD, ``git status --porcelain`` and every file's hash (``.git`` and the cache aside)."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".scarwarden")]
        for name in filenames:
            path = Path(dirpath, name)
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            files[path.relative_to(root).as_posix()] = hashlib.sha256(data).hexdigest()
    return (
        _git(root, "rev-parse", "HEAD"),
        _git(root, "status", "--porcelain", "--untracked-files=all"),
        files,
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryRepo]:
    root = tmp_path_factory.mktemp("corpus") / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Corpus")
    _git(root, "config", "user.email", "corpus@example.invalid")
    _git(root, "config", "commit.gpgsign", "false")
    init_memory(open_repo(root, initialised=False))
    yield open_repo(root)


def run(root: Path, *args: str, input: bytes | None = None) -> Any:
    """The CLI in-process, as a user runs it (the error boundary included)."""
    env = {"SCARWARDEN_DEBUG": ""}
    return CliRunner().invoke(main_group, ["--repo", str(root), *args], input=input, env=env)


def assert_refused(result: Any, message: str, code: int) -> None:
    output = result.stderr + result.stdout
    assert result.exit_code == code, output
    assert message in output, output
    assert "Traceback" not in output and "internal error" not in output, output


@pytest.mark.parametrize(("name", "expected"), EPISODE_CASES, ids=[name for name, _ in EPISODE_CASES])
def test_bad_episode_input_through_every_door(repo: MemoryRepo, name: str, expected: list[Any]) -> None:
    message, code, doors = expected
    raw = (CORPUS / "episode" / name).read_bytes()
    before = snapshot(repo.root)
    assert_refused(run(repo.root, "episode", "add", "--file", str(CORPUS / "episode" / name)), message, code)
    assert_refused(run(repo.root, "episode", "add", "--file", "-", input=raw), message, code)
    if "mcp" in doors:
        _through_mcp(repo, raw, message)
    argv = _as_flags(raw)
    if argv is not None:
        assert_refused(run(repo.root, "episode", "add", *argv), message, code)
    for door in doors:
        if door.startswith("web"):
            _through_web(repo, raw, door.partition("=")[2] or message)
    assert snapshot(repo.root) == before


#: Input keys that `episode add` takes as flags (repeatable ones take a list).
FLAGS = {"task": "--task", "action": "--action", "outcome": "--outcome", "correction": "--correction"}
FLAGS.update({"corrected_by": "--corrected-by", "agent": "--agent", "at": "--at"})
LIST_FLAGS = {"tags": "--tag", "refs": "--ref", "rules_applied": "--rule-applied"}


def _as_flags(raw: bytes) -> list[str] | None:
    """The same episode as ``episode add`` flags, when it is one mapping of text that
    flags can carry (a NUL or a lone surrogate included: argv in-process carries both)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any] | None:
        return dict(pairs) if len({k for k, _ in pairs}) == len(pairs) else None  # a flag is given once

    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=unique)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not data or not set(data) <= set(FLAGS) | set(LIST_FLAGS):
        return None
    if data.get("task") == "":  # click reads an empty --task as no --task (a usage error)
        return None
    argv: list[str] = []
    for key, value in data.items():
        if isinstance(value, str) and key in FLAGS:
            argv += [FLAGS[key], value]
        elif key == "tags" and isinstance(value, list) and len(value) > MAX_TAGS:
            return None  # more than --tag takes: a usage error (exit 2), tests/cli/test_tag_bound.py
        elif isinstance(value, list) and key in LIST_FLAGS and all(isinstance(v, str) for v in value):
            argv += [arg for v in value for arg in (LIST_FLAGS[key], v)]
        else:
            return None
    return argv if "--task" in argv else None


def _through_mcp(repo: MemoryRepo, raw: bytes, message: str) -> None:
    from scarwarden.agents.mcp.tools import RECORD_FIELDS, MemoryTools

    arguments = json.loads(raw) if raw.lstrip().startswith(b"{") else _yaml_mapping(raw)
    with pytest.raises(ScarwardenError) as refused:
        MemoryTools(repo).record_episode(arguments)
    rendered = refused.value.render()
    if set(arguments) <= set(RECORD_FIELDS):
        assert message in rendered, rendered
    else:  # an argument the tool does not declare is refused by name, before validation
        assert "record_episode does not take" in rendered, rendered


def _yaml_mapping(raw: bytes) -> dict[str, Any]:
    from scarwarden import yamlio

    data = yamlio.load(raw)
    assert isinstance(data, dict)
    return data


def _through_web(repo: MemoryRepo, raw: bytes, message: str) -> None:
    from scarwarden.audit.web.app import create_app

    task = json.loads(raw)["task"] if raw.lstrip().startswith(b"{") else _yaml_mapping(raw)["task"]
    client = create_app(repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    # The body as a browser would send it: UTF-8, percent-encoded (a lone surrogate,
    # which no browser sends, arrives as the bytes of one: not UTF-8).
    body = "csrf_token=t&answer=Use+the+portal&task=" + quote(task.encode("utf-8", "surrogatepass"))
    response = client.post(
        "/answer",
        data=body,
        headers={"Origin": "http://localhost", "Content-Type": "application/x-www-form-urlencoded"},
    )
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code in (400, 413), page
    if response.status_code == 400:
        assert "Cannot record this answer" in page
        surrogate = any("\ud800" <= ch <= "\udfff" for ch in task)
        assert ("The form is not valid UTF-8" if surrogate else message) in page, page


@pytest.mark.parametrize(("name", "expected"), STORED_CASES, ids=[name for name, _ in STORED_CASES])
def test_bad_files_on_disk_are_refused_by_the_gate_and_skipped_by_the_index(
    repo: MemoryRepo, name: str, expected: list[str]
) -> None:
    place, message = expected
    source = CORPUS / "stored" / name
    target = repo.root / place
    target.parent.mkdir(parents=True, exist_ok=True)
    if name.startswith("symlink"):
        target.symlink_to(source.read_text().strip())
    else:
        target.write_bytes(source.read_bytes())
    _git(repo.root, "add", "--", place)
    try:
        planted = snapshot(repo.root)
        assert_refused(run(repo.root, "check"), message, 1)
        listing = run(repo.root, "episode", "list")
        assert listing.exit_code == 0, listing.output
        assert "Traceback" not in listing.output
        if not name.startswith("symlink"):
            assert (
                f"skipped invalid episode {place}" in listing.stderr
                or "misplaced" in listing.stderr
                or ("file name and folder" in message)
            ), listing.stderr
        assert snapshot(repo.root) == planted  # the commands changed nothing
    finally:
        _git(repo.root, "rm", "-q", "--cached", "-f", "--", place)
        target.unlink()
    assert _git(repo.root, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize(("name", "expected"), PLAYBOOK_CASES, ids=[name for name, _ in PLAYBOOK_CASES])
def test_broken_playbooks_are_refused_by_rule_list_and_the_gate(
    repo: MemoryRepo, name: str, expected: list[str]
) -> None:
    (message,) = expected
    good = repo.playbook_path.read_bytes()
    repo.playbook_path.write_bytes((CORPUS / "playbook" / name).read_bytes())
    try:
        broken = snapshot(repo.root)
        assert_refused(run(repo.root, "rule", "list"), message, 1)
        _git(repo.root, "add", "--", repo.playbook_rel)
        assert_refused(run(repo.root, "check"), message.lstrip(":0123456789 "), 1)
        assert snapshot(repo.root)[0] == broken[0]  # no commit
    finally:
        repo.playbook_path.write_bytes(good)
        _git(repo.root, "add", "--", repo.playbook_rel)
    assert _git(repo.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_corpus_is_large_and_current() -> None:
    """At least 100 cases, and the files are what make_corpus.py writes."""
    import make_corpus

    assert len(EPISODE_CASES) + len(STORED_CASES) + len(PLAYBOOK_CASES) >= 100
    for group, cases in (("episode", make_corpus.EPISODE), ("playbook", make_corpus.PLAYBOOK)):
        for name, case in cases.items():
            assert (CORPUS / group / name).read_bytes() == case[0], f"{group}/{name}: run make_corpus.py"
