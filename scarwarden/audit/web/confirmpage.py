"""The ACT_AND_FLAG and candidate "Confirm PB-.. applies" buttons: ``POST /confirm``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import Flask, Response, request

from scarwarden.errors import ScarwardenError
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.answers.asking import ConfirmHints
    from scarwarden.audit.web.site import Pages


def add_confirm_route(app: Flask, site: Pages, repo: MemoryRepo) -> None:
    """``POST /confirm``: on ACT_AND_FLAG, a human says the best rule does apply.

    Recorded as a human answer (an episode referring to the rule's episodes, with the
    recall's receipt), so the next distillation and recall learn the task's words. A
    candidate confirmed on ASK_HUMAN (``candidate`` set) is recorded as ``ask --confirm``
    and MCP ``confirm_rule`` record it (issue 26): the rule's own words as the
    correction, its episodes as ``refs``, the action naming it."""

    @app.post("/confirm")
    def confirm() -> Response:
        refused = site.refuse_write(  # its words: it records an answer, it distils nothing
            nothing_can="recorded",
            read_only_hint="restart 'scarwarden serve' without --read-only to record answers",
            cannot="Cannot record this",
            reload="task page",
        )
        refused = refused or site.bad_receipt(repo, "Cannot record this")
        if refused is not None:
            return refused
        from scarwarden.answers.asking import confirmed_rule, recalled_refs
        from scarwarden.audit.web.recording import record_answer_once
        from scarwarden.errors import UsageError, ValidationError

        if request.form.get("candidate"):
            return _confirm_candidate(site, repo)
        try:  # no rule, an unknown or a retired one: said as the candidate button says it
            rule = confirmed_rule(repo, request.form.get("rule_id", ""), hints=_page_hints())
        except UsageError as exc:
            return site.refused(400, "Cannot record this", exc)
        task = request.form.get("task", "").replace("\r\n", "\n")
        returned = _returned(repo, task)  # as ask --confirm: only a rule recall returns
        if returned is not None and rule.id not in [r.id for r in returned]:
            return _not_returned(site, rule.id, returned)
        answer = f"Yes: {rule.id} ({rule.title}) applies to this task; follow it."
        # The recall's receipt (issue 20) goes along when the page had one to send.
        extra: dict[str, Any] = {} if returned is None else {"refs": recalled_refs(returned)}
        try:  # clicked twice (one recall's receipt): recorded once
            ep_id = record_answer_once(
                repo, task, answer, request.form.get("receipt") or None, form=site.form(), **extra
            )
        except (UsageError, ValidationError) as exc:
            return site.refused(400, "Cannot record this", exc)  # each problem, as the answer form
        return site.recorded(ep_id)


def _returned(repo: MemoryRepo, task: str) -> list[Any] | None:
    """The rules recall returns for ``task`` (not logged), or ``None`` when recall refuses
    it: recording it then refuses it in the ledger's words (which field, what is wrong)."""
    from scarwarden.recall.engine import recall_task

    try:
        return list(recall_task(repo, task, log=False).rules)
    except ScarwardenError:
        return None


def _not_returned(site: Pages, rule_id: str, returned: list[Any]) -> Response:
    """A confirmation of a rule recall does not return for the task (a forged or stale
    form) refused, as ``ask --confirm`` refuses it: the episode would tie the task to a
    rule nothing showed."""
    listed = f"it returns {', '.join(r.id for r in returned)}" if returned else "it returns no rule"
    return site.error(
        400,
        "Cannot record this",
        f"{rule_id} is not among the rules recall returns for this task ({listed}); nothing was recorded.",
        "recall the task again on the task page and confirm the rule it offers, or record the "
        "human's answer in its form",
    )


def _confirm_candidate(site: Pages, repo: MemoryRepo) -> Response:
    """An ASK_HUMAN candidate confirmed: :func:`~scarwarden.answers.asking.record_confirmation`,
    refused in the page's words (the CLI's name commands and a rule ID to type)."""
    from scarwarden.audit.web.recording import record_confirmation_once
    from scarwarden.audit.web.taskpage import page_hinted
    from scarwarden.errors import UsageError, ValidationError

    task = request.form.get("task", "").replace("\r\n", "\n").strip()
    rule_id, receipt = request.form.get("rule_id", ""), request.form.get("receipt") or None
    try:  # clicked twice (one recall's receipt): recorded once
        ep_id = record_confirmation_once(repo, task, rule_id, receipt, _page_hints(), site.form())
    except (UsageError, ValidationError) as exc:  # each problem, as the answer form
        return site.refused(400, "Cannot record this", page_hinted(exc, task))
    return site.recorded(ep_id)


def _page_hints() -> ConfirmHints:
    """A refused confirmation's hints in the page's words: the CLI's name commands and a
    rule ID to type; a page has buttons."""
    from scarwarden.answers.asking import ConfirmHints

    again = "recall the task again on the task page"
    return ConfirmHints(
        malformed=f"{again} and use the Confirm button of a rule it lists",
        unknown=f"{again} and confirm one of the rules it lists",
        retired=f"{again}: retired rules are never recalled; confirm an active rule it lists",
        unshown=f"{again} and confirm a rule it lists; to teach something new, record the "
        "human's answer in its form instead",
    )
