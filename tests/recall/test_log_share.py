"""``scarwarden log --export`` / ``--import``: one clone's recalls merged into another's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Cli, git

from scarwarden.index import open_index
from scarwarden.recall.engine import recall_task
from scarwarden.recall.log import read_log
from scarwarden.repo import MemoryRepo

TASKS = ["Post our discount code on Twitter", "Draft a LinkedIn post announcing our beta", "Book travel"]


def _recall_all(repo: MemoryRepo) -> None:
    for task in TASKS:
        recall_task(repo, task)


def test_export_writes_json_lines_oldest_first_with_receipts(cli: Cli, demo_repo: MemoryRepo) -> None:
    _recall_all(demo_repo)
    out = cli("log", "--export").stdout.splitlines()
    lines = [json.loads(line) for line in out]
    assert [line["task"] for line in lines] == TASKS
    assert "id" not in lines[0]
    receipt = lines[0]["detail"]["receipt"]
    assert receipt["task"] == TASKS[0] and receipt["rules"] == lines[0]["rule_ids"]
    assert len(cli("log", "--export", "--verdict", "ASK_HUMAN").stdout.splitlines()) == 1


def test_import_merges_another_clones_log_once(
    cli: Cli, demo_repo: MemoryRepo, make_cli: type[Cli], tmp_path: Path
) -> None:
    from scarwarden.files.scaffold import init as init_memory
    from scarwarden.repo import open_repo

    _recall_all(demo_repo)
    exported = tmp_path / "recalls.jsonl"
    lines = [json.loads(line) for line in cli("log", "--export").stdout.splitlines()]
    for n, line in enumerate(lines):  # made last week: older than the other clone's recall
        line["at"] = f"2026-11-20T10:00:0{n}Z"
    exported.write_text("".join(json.dumps(line) + "\n" for line in lines))
    other_root = tmp_path / "other"
    other_root.mkdir()
    git(other_root, "init", "-q")
    init_memory(open_repo(other_root, initialised=False), demo=True)
    other = open_repo(other_root)
    recall_task(other, "Refund a customer")
    other_cli = make_cli(other_root)
    result = other_cli("log", "--import", str(exported), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"added": 3, "skipped": 0}
    again = other_cli("log", "--import", str(exported), "--json")
    assert json.loads(again.stdout) == {"added": 0, "skipped": 3}
    with open_index(other) as index:
        entries = read_log(index, limit=None)
    # Newest first by time: the imported recalls (made last week) come after ours.
    assert [e.task for e in entries] == ["Refund a customer", *reversed(TASKS)]
    assert entries[1].detail["receipt"]["task"] == TASKS[-1]


def test_a_bad_or_forged_line_refuses_the_whole_file(cli: Cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    _recall_all(demo_repo)
    lines = cli("log", "--export").stdout.splitlines()
    forged = json.loads(lines[0])
    forged["detail"]["receipt"]["rules"] = ["PB-07"]  # hash left as it was
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[1], json.dumps(forged), "not json", '{"at": "yesterday"}']) + "\n")
    with open_index(demo_repo) as index:
        before = len(read_log(index, limit=None))
    result = cli("log", "--import", str(bad))
    assert result.exit_code == 1
    assert f"{bad}: 3 bad line(s); nothing was imported" in result.output
    assert f"{bad}:2: field 'detail.receipt': receipt " in result.output
    assert "does not match its contents" in result.output
    assert f"{bad}:3: not JSON" in result.output and f"{bad}:4: at 'yesterday' is not a time" in result.output
    with open_index(demo_repo) as index:
        assert len(read_log(index, limit=None)) == before


def test_the_log_shows_control_characters_escaped_and_json_keeps_them(
    cli: Cli, demo_repo: MemoryRepo
) -> None:
    """Recall refuses such a task now (test_task_characters.py); a log an older version
    wrote may still hold one."""
    task = "evil \x1b]0;pwned\x07 post \x9b2J \x00end"
    assert cli("recall", task).exit_code == 2
    assert cli("recall", "evil post").exit_code == 0
    with open_index(demo_repo) as index, index.conn:
        index.conn.execute("UPDATE recall_log SET task = ? WHERE task = 'evil post'", (task,))
    shown = cli("log", "-n", "1")
    assert shown.exit_code == 0
    assert not any(c in shown.stdout for c in "\x1b\x07\x9b\x00")
    assert "evil \\x1b]0;pwned\\x07 post \\x9b2J \\x00end" in shown.stdout
    assert json.loads(cli("log", "-n", "1", "--json").stdout)[0]["task"] == task


def _exported(cli: Cli, demo_repo: MemoryRepo, at: str) -> dict[str, Any]:
    """A line of this clone's exported log, moved to ``at`` (so it is no line of ours)."""
    _recall_all(demo_repo)
    line: dict[str, Any] = json.loads(cli("log", "--export").stdout.splitlines()[0])
    return {**line, "at": at}


def test_an_imported_line_holding_control_characters_is_refused(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    good = _exported(cli, demo_repo, "2026-11-20T10:00:00Z")
    lines = [
        {**good, "task": "a\x00b"},
        {**good, "task": "retitle \x1b]0;pwned\x07"},
        {**good, "rule_ids": ["PB-01\x1b[2J"]},
        {**good, "task": "tab\there\nand a newline"},  # allowed, as in episodes
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with open_index(demo_repo) as index:
        before = len(read_log(index, limit=None))
    result = cli("log", "--import", str(bad))
    assert result.exit_code == 1 and f"{bad}: 3 bad line(s); nothing was imported" in result.stderr
    assert f"{bad}:1: field 'task': holds a NUL character (U+0000)" in result.stderr
    assert f"{bad}:2: field 'task': holds an escape character (U+001B)" in result.stderr
    assert f"{bad}:3: field 'rule_ids': [0]: holds an escape character" in result.stderr
    with open_index(demo_repo) as index:
        assert len(read_log(index, limit=None)) == before
    bad.write_text(json.dumps(lines[3]) + "\n")
    assert cli("log", "--import", str(bad)).exit_code == 0


def test_an_imported_line_holding_a_number_that_is_not_finite_is_refused(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """log --json and --export would print it as NaN or Infinity: not JSON."""
    good = _exported(cli, demo_repo, "2026-11-21T10:00:00Z")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({**good, "scores": [1.5, float("inf")]})
        + "\n"
        + json.dumps({**good, "detail": {**good["detail"], "best_score": float("nan")}})
        + "\n"
        + json.dumps({**good, "detail": {"x": 1}}).replace('"x": 1', '"x": 1e999')
        + "\n"
    )
    result = cli("log", "--import", str(bad))
    assert result.exit_code == 1 and f"{bad}: 3 bad line(s); nothing was imported" in result.stderr
    assert f"{bad}:1: field 'scores[1]': inf is not a finite number" in result.stderr
    assert f"{bad}:2: field 'detail.best_score': nan is not a finite number" in result.stderr
    assert f"{bad}:3: field 'detail.x': inf is not a finite number" in result.stderr
    assert "Infinity" not in cli("log", "--json").stdout


def test_import_names_a_nested_field_once_quoted(cli: Cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """A refused character deep in a line is named as an episode's is: the field, then
    the path below it ("field 'detail': 'receipt'.'task': ...", not "field
    'detail.'receipt'.'task''")."""
    good = _exported(cli, demo_repo, "2026-11-21T10:00:00Z")
    bad = tmp_path / "bad.jsonl"
    receipt = {**good["detail"]["receipt"], "task": "x\x1by"}
    lines = [
        {**good, "detail": {**good["detail"], "receipt": receipt}},
        {**good, "detail": {**good["detail"], "my notes": ["ok", "a\x07b"]}},
    ]
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = cli("log", "--import", str(bad))
    assert result.exit_code == 1
    assert f"{bad}:1: field 'detail': 'receipt'.'task': holds an escape character (U+001B)" in result.stderr
    assert f"{bad}:2: field 'detail': 'my notes'[1]: holds a control character (U+0007)" in result.stderr


def test_an_imported_line_whose_scores_do_not_match_its_rules_is_refused(
    cli: Cli, demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """Scores are the rules', one each: a line with two rules and one score was imported
    and ``log`` showed one rule ("rules: PB-01 (1)"), the other lost; ``true`` was taken
    for a score (shown as 1, and as ``true`` by ``log --json``)."""
    _recall_all(demo_repo)
    line = json.loads(cli("log", "--export").stdout.splitlines()[0])
    short, boolean = dict(line, rule_ids=["PB-01", "PB-02"], scores=[1.0]), dict(line, scores=[True])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(short) + "\n" + json.dumps(boolean) + "\n")
    with open_index(demo_repo) as index:
        before = len(read_log(index, limit=None))
    result = cli("log", "--import", str(bad))
    assert result.exit_code == 1, result.output
    assert f"{bad}:1: scores must be a list of numbers, one for each of rule_ids" in result.output
    assert f"{bad}:2: scores must be a list of numbers, one for each of rule_ids" in result.output
    with open_index(demo_repo) as index:
        assert len(read_log(index, limit=None)) == before


def test_an_option_the_mode_would_ignore_is_refused(cli: Cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """--import with --export or a filter, and --export with --json, were run with the
    option dropped in silence; each is a usage error now, and nothing is imported."""
    recall_task(demo_repo, "Draft a LinkedIn post announcing our beta")
    exported = tmp_path / "mine.jsonl"
    exported.write_text(cli("log", "--export").stdout)
    for args, says in [
        (["--import", str(exported), "--export"], "--import and --export go one at a time"),
        (["--import", str(exported), "--since", "7d"], "--import merges the whole file"),
        (["--import", str(exported), "--verdict", "ACT"], "--import merges the whole file"),
        (["--export", "--json"], "--export writes JSON lines already"),
    ]:
        result = cli("log", *args)
        assert result.exit_code == 2, (args, result.output)
        assert says in result.stderr and "hint: " in result.stderr
        assert result.stdout == ""
    with open_index(demo_repo) as index:
        assert len(read_log(index, limit=100)) == 1  # nothing imported twice, nothing lost
    assert cli("log", "--import", str(exported), "--json").exit_code == 0
