"""Each field of a recall receipt, checked (:func:`check_fields`; the format and its
hash are :mod:`scarwarden.files.receipt`'s): types and forms, the evidence, the
candidates shown on ``ASK_HUMAN`` (issue 26), the settings. That a receipt's contents
are what recall gives is proved by the gate, which re-derives them."""

from __future__ import annotations

import re
from collections.abc import Mapping

from scarwarden.files.episode_fields import EPISODE_ID_RE, RULE_ID_RE
from scarwarden.files.input_policy import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The first recall algorithm version that gives candidates on ``ASK_HUMAN``.
CANDIDATES_SINCE = 4
#: Appended to ``ledger`` when recall's index also held episode files that the named
#: tree does not (uncommitted ones): such a receipt cannot be re-derived from git.
UNCOMMITTED = "+uncommitted"
#: The recall settings a receipt records (scarwarden.yaml ``recall:`` plus the limit used).
SETTING_KEYS = ("act_threshold", "floor", "act_tag_hits", "limit")
VERDICTS = ("ACT", "ACT_AND_FLAG", "ASK_HUMAN")
#: The same cap as :data:`scarwarden.recall.engine.MAX_TASK_CHARS` (a test keeps them equal).
MAX_TASK_CHARS = 20_000
#: Hex digits of the content hash kept: 64 bits, enough to name a recall.
HASH_CHARS = 16

_BLOB_RE = re.compile(r"^[0-9a-f]{40}\Z")
_LEDGER_RE = re.compile(r"^[0-9a-f]{40}(\+uncommitted)?\Z")
_HASH_RE = re.compile(rf"^[0-9a-f]{{{HASH_CHARS}}}\Z")


def check_fields(data: Mapping[str, Any], bad: Any) -> None:
    """Each field's type and form."""
    if not isinstance(data["receipt"], str) or not _HASH_RE.match(data["receipt"]):
        bad(f"receipt {quoted(data['receipt'])} is not {HASH_CHARS} lower-case hex digits")
    algorithm = data["algorithm"]
    if isinstance(algorithm, bool) or not isinstance(algorithm, int) or algorithm < 1:
        bad(f"algorithm {quoted(algorithm)} is not a recall algorithm version (a positive integer)")
    if not isinstance(data["playbook"], str) or not _BLOB_RE.match(data["playbook"]):
        bad(f"playbook {quoted(data['playbook'])} is not a git blob ID (40 lower-case hex digits)")
    task = data["task"]
    if not isinstance(task, str) or not task.strip() or task != task.strip():
        bad("task must be the non-empty, stripped text that was recalled")
    elif len(task) > MAX_TASK_CHARS:
        bad(f"task is {len(task):,} characters; recall refuses more than {MAX_TASK_CHARS:,}")
    ledger = data.get("ledger")
    if ledger is not None and (not isinstance(ledger, str) or not _LEDGER_RE.match(ledger)):
        bad(
            f"ledger {quoted(ledger)} is not a git tree ID (40 lower-case hex digits, "
            f"optionally followed by {UNCOMMITTED})"
        )
    if data["verdict"] not in VERDICTS:
        bad(f"verdict {quoted(data['verdict'])} is not one of {', '.join(VERDICTS)}")
    rules = data["rules"]
    if not isinstance(rules, list) or not all(isinstance(r, str) and RULE_ID_RE.match(r) for r in rules):
        bad("rules must be a list of rule IDs such as PB-03")
    elif len(set(rules)) != len(rules):
        bad("rules lists a rule twice")
    _check_evidence(data.get("evidence"), bad)
    _check_candidates(data, bad)
    _check_settings(data["settings"], bad)


def _check_evidence(evidence: Any, bad: Any) -> None:
    """``evidence``: absent, or a mapping of rule IDs to episode IDs (that they are the
    returned rules' is proved by the gate, which re-derives them)."""
    if evidence is None:
        return
    if not isinstance(evidence, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and EPISODE_ID_RE.match(v) for k, v in evidence.items()
    ):
        bad("evidence must map rule IDs to episode IDs, e.g. {PB-03: ep-0a1b2c3d4e}")


def _check_candidates(data: Mapping[str, Any], bad: Any) -> None:
    """``candidates`` and ``candidate_evidence``: both absent, or both present on an
    ``ASK_HUMAN`` receipt of a version that gives candidates; the candidates are rule IDs
    or episode IDs, each once; the evidence maps candidate rules to episode IDs (that
    they are what recall showed is proved by the gate, which re-derives them)."""
    shown, quoted = data.get("candidates"), data.get("candidate_evidence")
    if shown is None and quoted is None:
        return
    if shown is None or quoted is None:
        bad("candidates and candidate_evidence go together: give both or neither")
        return
    algorithm = data["algorithm"]
    if isinstance(algorithm, int) and algorithm < CANDIDATES_SINCE:
        bad(f"candidates are given from recall version {CANDIDATES_SINCE} on, not version {algorithm}")
    if data["verdict"] != "ASK_HUMAN":
        bad("candidates are given only on ASK_HUMAN")
    ids = shown if isinstance(shown, list) else []
    if not isinstance(shown, list) or not (
        all(isinstance(c, str) and RULE_ID_RE.match(c) for c in ids)
        or all(isinstance(c, str) and EPISODE_ID_RE.match(c) for c in ids)
    ):
        bad("candidates must be a list of rule IDs (PB-03) or of episode IDs (ep-0a1b2c3d4e)")
    elif len(set(ids)) != len(ids):
        bad("candidates lists one twice")
    if not isinstance(quoted, Mapping) or not all(
        isinstance(k, str) and k in ids and isinstance(v, str) and EPISODE_ID_RE.match(v)
        for k, v in quoted.items()
    ):
        bad("candidate_evidence must map candidate rule IDs to episode IDs, e.g. {PB-03: ep-0a1b2c3d4e}")


def _check_settings(settings: Any, bad: Any) -> None:
    if not isinstance(settings, Mapping) or set(settings) != set(SETTING_KEYS):
        bad("settings must hold exactly: " + ", ".join(SETTING_KEYS))
        return
    for key in ("act_threshold", "floor"):
        value = settings[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            bad(f"settings.{key} {quoted(value)} is not a confidence between 0 and 1")
    for key in ("act_tag_hits", "limit"):
        value = settings[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            bad(f"settings.{key} {quoted(value)} is not a positive integer")
    low, high = settings["floor"], settings["act_threshold"]
    if all(isinstance(v, (int, float)) for v in (low, high)) and high < low:
        bad(f"settings.act_threshold {high!r} is below settings.floor {low!r}")
