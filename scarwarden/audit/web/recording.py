"""Recording a form's human answer or confirmation once per recall: a double-click, a
browser's re-POST or two tabs sent together carry the same recall's receipt, and
episodes are append-only (a duplicate could never be removed).

An answer identical in substance to one already recorded from the same receipt (the
same task and the same answer, a confirmation's included) is not recorded again: the
form is sent to that episode. The look-up is the index's ``episodes.receipt`` (only
the episodes that carry that receipt are read), under the ledger's write lock, so two
server threads (or a server and the CLI) posting at once record one. A different answer
to the same receipt is recorded: a human may correct themselves.

A task page opened by its address (``/task?task=...``) logs no recall, so its forms
carry no receipt; they carry a form ID instead (:class:`SentForms`), and the same
answer sent twice from one such form is recorded once, told apart in the server's
memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scarwarden.errors import UsageError
from scarwarden.files.atomic import write_lock
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.answers.asking import ConfirmHints

#: Records the episode, given the receipt to store and whether the write lock is held.
Record = Callable[[Any, bool], str]


class SentForms:
    """The episodes this server recorded from forms carrying no receipt (a task page
    opened by its address logs no recall), by the form's ID (made afresh for each page
    shown) and what was recorded: the same answer sent again from the same form is sent
    to the first's episode. Held in memory, the newest :attr:`LIMIT`: a form is only
    taken with this server process's CSRF token, so a restarted server refuses an older
    page's form (403) and needs nothing written to tell a second sending; and the
    look-up reads nothing of the ledger."""

    LIMIT = 1024

    def __init__(self) -> None:
        self._lock = threading.Lock()  # two server threads sending one form record one
        self._recorded: dict[tuple[str, str, str], str] = {}

    def once(self, form_id: str, task: str, correction: str, record: Callable[[], str]) -> str:
        """The episode recorded from ``form_id`` for ``task`` and ``correction``, recorded
        by ``record`` if none was."""
        key = (form_id, task, correction)
        with self._lock:
            if key not in self._recorded:
                self._recorded[key] = record()  # not kept if refused: sent again, it is tried again
                while len(self._recorded) > self.LIMIT:
                    self._recorded.pop(next(iter(self._recorded)))
            return self._recorded[key]


#: A form's ID and the server's memory of what its forms recorded (no receipt to go by).
Form = tuple[SentForms, str]


def record_answer_once(
    repo: MemoryRepo, task: str, answer: str, receipt: str | None, *, form: Form | None = None, **extra: Any
) -> str:
    """The ID of the episode recording ``answer`` to ``task``: the one already recorded
    from ``receipt`` (else from ``form``, when no receipt is sent) with the same task and
    answer, else a new one (:func:`~scarwarden.answers.asking.record_human_answer`,
    errors as it raises them)."""
    from scarwarden.answers.asking import record_human_answer

    def record(recalled: Any, locked: bool) -> str:
        return record_human_answer(repo, task, answer, receipt=recalled, locked=locked, **extra).id

    return _once(repo, task, answer, receipt, record, form)


def record_confirmation_once(
    repo: MemoryRepo,
    task: str,
    rule_id: str,
    receipt: str | None,
    hints: ConfirmHints,
    form: Form | None = None,
) -> str:
    """As :func:`record_answer_once`, for a candidate confirmed
    (:func:`~scarwarden.answers.asking.record_confirmation`): its answer is the rule's text."""
    from scarwarden.answers.asking import confirmed_rule, record_confirmation

    def record(recalled: Any, locked: bool) -> str:
        return record_confirmation(repo, task, rule_id, hints=hints, receipt=recalled, locked=locked)[0].id

    try:
        text: str | None = confirmed_rule(repo, rule_id, hints=hints).text
    except UsageError:  # refused by recording it, in its words
        text = None
    return _once(repo, task, text, receipt if text is not None else None, record, form)


def recorded_warnings(repo: MemoryRepo, episode: Any) -> list[str]:
    """What ``privacy:`` warns about in an episode a form recorded, for its page to say
    (``ask --answer`` says it on stderr, MCP and the API in ``warnings``). Derived from
    the episode and the settings on the page, not carried from the POST: a form sent
    twice is sent the second time to the episode the first recorded, with no write to
    warn, and a restarted server (or another thread) knows nothing of the POST."""
    from scarwarden.files import privacy

    said = []
    for found in privacy.scan_mapping(episode.data, repo.config.privacy.kinds("warn")):
        field = found.field or ""
        top = field.split(".")[0].split("[")[0]  # recalled.task, tags[0]: what redact takes
        said.append(
            f"field '{field}' holds personal data: {found.label} (privacy.{found.kind}: warn); it was "
            f"recorded as written. To take it back: scarwarden redact {episode.id} --fields {top} "
            "--reason 'personal data'"
        )
    return said


def _once(
    repo: MemoryRepo, task: str, answer: str | None, receipt: str | None, record: Record, form: Form | None
) -> str:
    from scarwarden.answers.asking import human_answer_input
    from scarwarden.recall.receipts import resolve

    if not receipt and form is not None and answer is not None:  # a page that logged no recall
        data = human_answer_input(task, answer)
        return form[0].once(form[1], str(data["task"]), str(data["correction"]), lambda: record(None, False))
    if not receipt or answer is None:  # no recall to tell a second sending from a second answer
        return record(receipt or None, False)
    recalled = resolve(repo, receipt, source="receipt")  # once: recording takes it as found
    with write_lock(repo):
        data = human_answer_input(task, answer)
        same = _recorded(repo, str(recalled["receipt"]), str(data["task"]), str(data["correction"]))
        return same if same is not None else record(recalled, True)


def _recorded(repo: MemoryRepo, receipt_id: str, task: str, correction: str) -> str | None:
    """The first human answer carrying ``receipt_id`` that records ``correction`` for
    ``task``."""
    with open_index(repo) as index:
        rows = index.conn.execute("SELECT id FROM episodes WHERE receipt = ? ORDER BY t, id", (receipt_id,))
        for (episode_id,) in rows.fetchall():
            episode = index.get_episode(episode_id)
            if episode is None or episode.get("source") != "human-answer":
                continue
            if episode.task == task and episode.get("correction") == correction:
                return str(episode_id)
    return None
