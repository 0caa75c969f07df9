"""Sharing the recall log between clones: ``scarwarden log --export`` / ``--import``.

The recall log lives in one clone's index (it is operational data, not memory), so a
team that wants to see what its fleet of agents recalled exports it as JSON lines and
merges them elsewhere. Each line is one recall: ``{at, task, verdict, rule_ids, scores,
playbook_commit, detail}``, ``detail.receipt`` holding the recall's receipt (issue 20),
which links the line to the episodes that carry it. What leaves the clone is screened
as the ledger screens episodes (:func:`screen_line`); the log itself keeps the exact text.

An import is all or nothing: every line is checked first (a JSON object, the fields'
types, a known verdict, a time, a receipt whose hash matches, text free of NUL and other
control characters but tab and newline, as episodes' text is), and a bad line refuses
the whole file naming its line, so nothing is half-merged. Lines already in the log
(same time, task, verdict, rules, playbook and receipt, or a line of ours as the export
redacted it) are skipped, so importing the same file twice, or a clone's log that holds
lines of ours, adds nothing twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scarwarden.errors import Problem, ScarwardenError, ValidationError
from scarwarden.files.input_policy import encoding_problems_in
from scarwarden.recall.log import LogEntry, read_log
from scarwarden.recall.router import VERDICTS

if TYPE_CHECKING:
    from scarwarden.config import PrivacySettings
    from scarwarden.index import Index

#: A line longer than this is refused (a recall line is a few KiB at most: the task is
#: capped at 20,000 characters).
MAX_LINE_BYTES = 256 * 1024
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
#: The keys under which a line holds what recall wrote itself, and the shapes of those
#: values (commit, blob and tree IDs, a receipt's hash, rule and episode IDs, times,
#: verdicts): no credential is one of them alone, and none of the keys names a secret.
#: The receipt's ``evidence`` maps rule IDs to episode IDs, so a rule ID is such a key.
_MACHINE_KEYS = frozenset(
    {"at", "verdict", "playbook_commit", "rule_ids", "ledger", "playbook", "receipt", "rules", "candidates"}
)
_MACHINE = re.compile(
    r"(?:[0-9a-f]{7,64}(?:\+uncommitted)?|PB-[0-9A-Za-z]{2,16}|ep-[0-9a-z-]{3,41}"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|ACT|ACT_AND_FLAG|ASK_HUMAN)\Z"
)
#: A key that is a plain word or a rule ID: nothing to screen in the key itself.
_PLAIN = re.compile(r"(?:[A-Za-z_]{1,30}|PB-[0-9A-Za-z]{2,16})\Z")


@dataclass
class ExportTally:
    """What an export screened: the lines written, those with text replaced by a
    placeholder, and those kept holding personal data that ``privacy: warn`` lets through."""

    lines: int = 0
    redacted: int = 0
    personal: int = 0


def export_lines(index: Index, tally: ExportTally | None = None, **filters: Any) -> Iterator[str]:
    """The log as JSON lines, oldest first (``filters``: those of :func:`read_log`),
    each screened by :func:`screen_line` with the memory's settings; ``tally`` counts."""
    config = index.repo.config
    tally = tally if tally is not None else ExportTally()
    for entry in reversed(read_log(index, limit=None, **filters)):
        data = entry.to_json()
        del data["id"]  # a rowid means nothing in another clone
        data, kinds, personal = screen_line(data, config.secrets.allow, config.privacy)
        tally.lines += 1
        tally.redacted += bool(kinds)
        tally.personal += personal
        yield json.dumps(data, ensure_ascii=False, sort_keys=True)


def screen_line(
    data: dict[str, Any], allow: Collection[str], settings: PrivacySettings
) -> tuple[dict[str, Any], list[str], bool]:
    """``data`` as it may leave the machine, the kinds replaced, and whether it still holds
    personal data that ``privacy: warn`` lets through. The ledger's screen
    (:mod:`scarwarden.files.secret_scan`, ``secrets.allow`` and the inline marker
    honoured) reads every text: one holding a credential becomes ``[redacted <kind>]``,
    personal data that ``privacy: refuse`` refuses becomes ``[email]``, ``[card]``...
    as ``--redact-pii`` writes it. The receipt's hash covers the task, so a line whose
    task or receipt changed leaves its receipt out (never a receipt for other text)."""
    from scarwarden.files import privacy, secret_scan

    refuse = settings.kinds("refuse")
    text = _text_of(data, "") or {}
    if not secret_scan.scan_mapping(text, allow) and not privacy.scan_mapping(text, refuse):
        return data, [], bool(privacy.scan_mapping(text, settings.kinds("warn")))  # nearly every line
    kinds: list[str] = []

    def clean(key: str, value: Any) -> Any:
        if isinstance(value, list):
            return [clean(key, item) for item in value]
        if isinstance(value, dict):
            return {name: clean(str(name), item) for name, item in value.items()}
        if not isinstance(value, str):
            return value
        found = list(dict.fromkeys(f.kind for f in secret_scan.scan_mapping({key: value}, allow)))
        if found:
            kinds.extend(found)
            return f"[redacted {', '.join(found)}]"
        kinds.extend(kind for kind, _start, _end in privacy.find(value, refuse))
        return privacy.redact_text(value, refuse)[0]

    out = clean("", data)
    left = secret_scan.scan_mapping(out, allow) + privacy.scan_mapping(out, refuse)
    if left:  # across two texts, or in a key: nothing of the line's text is kept
        kinds.extend(f.kind for f in left)
        out = {**out, "task": "[redacted]", "rule_ids": [], "scores": [], "detail": {}}
    if not kinds:
        return data, [], bool(privacy.scan_mapping(data, settings.kinds("warn")))
    kinds = list(dict.fromkeys(kinds))
    detail = out["detail"]
    if out["task"] != data["task"] or detail.get("receipt") != data["detail"].get("receipt"):
        detail.pop("receipt", None)
    detail["redacted"] = kinds
    return out, kinds, bool(privacy.scan_mapping(out, settings.kinds("warn")))


def _text_of(value: Any, key: str) -> Any:
    """The text of ``value`` the screen reads (``None``: none): what recall writes itself
    (:data:`_MACHINE`), numbers, and plain keys holding neither are left out. A line's
    hashes and IDs are most of its strings, and would cost the screen ~1 ms a line."""
    if isinstance(value, dict):
        kept = {name: _text_of(item, str(name)) for name, item in value.items()}
        return {
            name: item for name, item in kept.items() if item is not None or not _PLAIN.match(str(name))
        } or None
    if isinstance(value, list):
        return [text for text in (_text_of(item, key) for item in value) if text is not None] or None
    if not isinstance(value, str):
        return None
    return None if (key in _MACHINE_KEYS or _MACHINE.match(key)) and _MACHINE.match(value) else value


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
    have |= _screened_twins(index, rows)
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


def _screened_twins(index: Index, rows: list[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    """The keys our lines had in an export, for the rows an export redacted: a line of ours
    that came back redacted (from a clone that imported our export) is no new line."""
    wanted = {(r[0], r[2], r[3], r[5]) for r in rows if "redacted" in json.loads(r[6])}
    if not wanted:
        return set()
    config, twins = index.repo.config, set()
    for entry in read_log(index, limit=None):
        if (entry.at, entry.verdict, json.dumps(entry.rule_ids), entry.playbook_commit) in wanted:
            out = screen_line(entry.to_json(), config.secrets.allow, config.privacy)[0]
            twins.add(_key(LogEntry(**out)))  # to_json's fields are LogEntry's
    return twins


def _key(entry: LogEntry) -> tuple[Any, ...]:
    receipt = entry.detail.get("receipt") if isinstance(entry.detail, dict) else None
    rid = receipt.get("receipt") if isinstance(receipt, dict) else None
    return (entry.at, entry.task, entry.verdict, tuple(entry.rule_ids), entry.playbook_commit, rid)
