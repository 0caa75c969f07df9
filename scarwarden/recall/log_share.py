"""Sharing the recall log between clones: ``scarwarden log --export`` / ``--import``.

The recall log lives in one clone's index (it is operational data, not memory), so a
team that wants to see what its fleet of agents recalled exports it as JSON lines and
merges them elsewhere. Each line is one recall: ``{at, task, verdict, rule_ids, scores,
playbook_commit, detail}``, ``detail.receipt`` holding the recall's receipt (issue 20),
which links the line to the episodes that carry it.

An import is all or nothing: every line is checked first (a JSON object, the fields'
types, a known verdict, a time, a receipt whose hash matches, text free of NUL and other
control characters but tab and newline, as episodes' text is), and a bad line refuses
the whole file naming its line, so nothing is half-merged. Lines already in the log
(same time, task, verdict, rules, playbook and receipt) are skipped, so importing the
same file twice, or a clone's log that holds lines of ours, adds nothing twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scarwarden.errors import Problem, ScarwardenError, ValidationError
from scarwarden.files.input_policy import encoding_problems_in
from scarwarden.recall.log import LogEntry, read_log
from scarwarden.recall.router import VERDICTS

if TYPE_CHECKING:
    from scarwarden.index import Index

#: A line longer than this is refused (a recall line is a few KiB at most: the task is
#: capped at 20,000 characters).
MAX_LINE_BYTES = 256 * 1024
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def export_lines(index: Index, **filters: Any) -> Iterator[str]:
    """The log as JSON lines, oldest first (``filters``: those of :func:`read_log`)."""
    for entry in reversed(read_log(index, limit=None, **filters)):
        data = entry.to_json()
        del data["id"]  # a rowid means nothing in another clone
        yield json.dumps(data, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class ImportResult:
    added: int
    skipped: int

    def to_json(self) -> dict[str, int]:
        return {"added": self.added, "skipped": self.skipped}


def import_lines(index: Index, lines: Iterable[str | bytes], *, source: str = "<import>") -> ImportResult:
    """Merge exported lines into the log; :class:`ValidationError` naming every bad line
    (then nothing is written)."""
    rows, problems = [], []
    for number, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:  # refused, not repaired (docs/formats.md, "Text")
                problems.append(Problem(f"not valid UTF-8 (byte {exc.start + 1})", file=source, line=number))
                continue
        if not line.strip():
            continue
        row, problem = _row(line, number, source)
        if problem is not None:
            problems.append(problem)
        elif row is not None:
            rows.append(row)
    if problems:
        raise ValidationError(
            f"{source}: {len(problems)} bad line(s); nothing was imported",
            problems=problems[:20],
            hint="import a file written by 'scarwarden log --export', unchanged",
        )
    return _insert(index, rows)


def _row(line: str, number: int, source: str) -> tuple[tuple[Any, ...] | None, Problem | None]:
    def bad(message: str) -> tuple[None, Problem]:
        return None, Problem(message, file=source, line=number)

    if len(line.encode("utf-8")) > MAX_LINE_BYTES:
        return bad(f"the line is over {MAX_LINE_BYTES // 1024} KiB")
    try:
        data = json.loads(line)
    except ValueError as exc:
        return bad(f"not JSON ({exc})")
    if not isinstance(data, dict):
        return bad("a line must be a JSON object")
    surrogate = next(encoding_problems_in(data), None)  # a "\\ud800" escape: no UTF-8 for the index
    if surrogate is not None:
        return bad(f"{surrogate[0]}: {surrogate[1]}")
    from scarwarden.times import parse_when

    raw_at = data.get("at")
    try:
        if not isinstance(raw_at, str) or not _TIME.match(raw_at):
            raise ValueError
        at = parse_when(raw_at)
    except (ValueError, ScarwardenError):
        return bad(f"at {raw_at!r} is not a time such as 2026-11-24T09:15:00Z")
    if not isinstance(data.get("task"), str) or not data["task"].strip():
        return bad("task must be non-empty text")
    from scarwarden.files.input_policy import non_finite_in, problems_in

    for key, value in data.items():  # NUL, ESC...: what no stored text may hold
        for where, why in problems_in(value):  # as an episode's: "field 'detail': 'receipt'.'task': ..."
            return None, Problem(
                f"{where + ': ' if where else ''}{why}", file=source, line=number, field=str(key)
            )
        for where, odd in non_finite_in(value, str(key)):  # log --json would print NaN
            return None, Problem(f"{odd!r} is not a finite number", file=source, line=number, field=where)
    task_problem = _task_problem(data["task"])  # after the field-by-field text checks
    if task_problem is not None:
        return None, Problem(task_problem, file=source, line=number, field="task")
    if data.get("verdict") not in VERDICTS:
        return bad(f"verdict {data.get('verdict')!r} is not one of {', '.join(VERDICTS)}")
    rule_ids, scores = data.get("rule_ids"), data.get("scores")
    if not isinstance(rule_ids, list) or not all(isinstance(r, str) for r in rule_ids):
        return bad("rule_ids must be a list of rule IDs")
    numbers = isinstance(scores, list) and all(type(s) in (int, float) for s in scores)  # not True
    if not isinstance(scores, list) or not numbers or len(scores) != len(rule_ids):  # `log` pairs them
        return bad("scores must be a list of numbers, one for each of rule_ids")
    commit = data.get("playbook_commit")
    if commit is not None and not isinstance(commit, str):
        return bad("playbook_commit must be a commit ID or null")
    detail = data.get("detail", {})
    if not isinstance(detail, dict):
        return bad("detail must be an object")
    if detail.get("receipt") is not None:
        from scarwarden.files import receipt as receipt_format

        found, problems = receipt_format.check(detail["receipt"], source=source, field="detail.receipt")
        if found is None:
            return None, Problem(problems[0].message, file=source, line=number, field="detail.receipt")
    row = (at, data["task"], data["verdict"], json.dumps(rule_ids), json.dumps(scores), commit)
    return row + (json.dumps(detail, sort_keys=True),), None


def _task_problem(task: str) -> str | None:
    """Why ``task`` is not one recall would have logged, or ``None``: the import takes
    exactly the tasks recall takes (:func:`scarwarden.recall.engine.check_task`)."""
    from scarwarden.errors import UsageError
    from scarwarden.recall.engine import check_task

    try:
        checked = check_task(task)
    except UsageError as exc:
        return exc.message
    return None if checked == task else "the task has blanks around it; recall logs it stripped"


def _insert(index: Index, rows: list[tuple[Any, ...]]) -> ImportResult:
    """Insert the rows not in the log yet, oldest first, in one transaction."""
    from scarwarden.index import writer_lock
    from scarwarden.index.schema import transaction

    conn = index.conn
    have = {
        _key(LogEntry(0, r[0], r[1], r[2], json.loads(r[3]), [], r[4], json.loads(r[5] or "{}")))
        for r in conn.execute("SELECT at, task, verdict, rule_ids, playbook_commit, detail FROM recall_log")
    }
    new = []
    for row in sorted(rows, key=lambda r: r[0]):
        key = _key(LogEntry(0, row[0], row[1], row[2], json.loads(row[3]), [], row[5], json.loads(row[6])))
        if key not in have:
            have.add(key)
            new.append(row)
    with writer_lock(index.repo), transaction(conn):
        conn.executemany(
            "INSERT INTO recall_log (at, task, verdict, rule_ids, scores, playbook_commit, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            new,
        )
    return ImportResult(added=len(new), skipped=len(rows) - len(new))


def _key(entry: LogEntry) -> tuple[Any, ...]:
    receipt = entry.detail.get("receipt") if isinstance(entry.detail, dict) else None
    rid = receipt.get("receipt") if isinstance(receipt, dict) else None
    return (entry.at, entry.task, entry.verdict, tuple(entry.rule_ids), entry.playbook_commit, rid)
