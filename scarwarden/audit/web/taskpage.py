"""The task page: a task in, the verdict, the recalled rules with why they matched,
and the answer with memory and without it, side by side (the amnesia toggle).

With a model configured (an API key), both sides are real answers from
:func:`scarwarden.answer.answer_task` and the memory side's citations are verified by
code. Without one, the memory side is the rule-grounded brief and the other side
shows what a model would get without memory: the bare task.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scarwarden.errors import ScarwardenError, UsageError
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.answers.answer import Side

MODES = ("both", "on", "off")


@dataclass
class Column:
    """One side of the comparison."""

    memory: bool
    heading: str
    kind: str  # "answer", "brief", "bare" or "none"
    text: str | None = None
    model: str | None = None
    verification: Any = None  # scarwarden.citations.Verification
    note: str | None = None


def unwrap(text: str, width: int = 88) -> str:
    """Undo the hard wrapping of a terminal brief so it reflows in a page column.

    A line continues the one before when greedy wrapping at ``width`` must have broken
    there (its first word would not have fitted) and both have the same indentation;
    every other line break is kept.
    """
    out: list[str] = []
    last = ""  # the previous line as it was, before any joining
    for line in text.split("\n"):
        prev = out[-1] if out else ""
        indent = len(line) - len(line.lstrip())
        first_word = line.split()[0] if line.strip() else ""
        # Greedy wrapping broke here only if the next word would not have fitted.
        wrapped = last.strip() and len(last) <= width < len(last) + 1 + len(first_word)
        label = first_word.endswith(":")  # "Matched:", "Cite as:" start their own line
        if first_word and wrapped and not label and indent == len(prev) - len(prev.lstrip()):
            out[-1] = prev + " " + line.strip()
        else:
            out.append(line)
        last = line
    return "\n".join(out)


def task_page(
    repo: MemoryRepo,
    task: str | None,
    *,
    mode: str = "both",
    environ: Mapping[str, str] | None = None,
    log: bool = False,
) -> dict[str, Any]:
    """The page's context; raises :class:`~scarwarden.errors.ScarwardenError` for a task
    recall refuses. ``log``: append the recall to the recall log (only on an explicit
    action, the form's POST: loading ``/task?task=...`` writes nothing)."""
    from scarwarden.answers.answer import answer_or_brief
    from scarwarden.llm.client import client_from_config

    mode, mode_error = _mode(mode)
    task = (task or "").strip()  # whole: recall refuses one too long (a 400), never cut
    ctx: dict[str, Any] = {
        "title": "Task",
        "nav": "task",
        "task": task,
        "mode": mode,
        "recall": None,
        "columns": [],
        "model_error": None,
        "why": None,
        "known_rules": None,
        "filter_error": mode_error,
        "refusal": None,  # a task refused: why, above the form holding it
        "refusal_hint": None,
    }
    if not task:
        return ctx
    from scarwarden.recall.engine import check_task

    try:  # memory off too: the bare task is a model's prompt and this page's text
        check_task(task)
    except UsageError as exc:  # the form again, the task in it: an error page lost it
        return _refused(ctx, page_hinted(exc, task))
    client = client_from_config(repo.config, environ)
    ctx["model_configured"] = client is not None
    # A failing model (unreachable, bad key, bad output) still leaves what memory gives
    # without it; the page says why there is no answer.
    result, ctx["model_error"] = answer_or_brief(
        repo, task, client=client, memory=mode != "off", compare=mode == "both", log=log
    )
    ctx["recall"], ctx["screened"] = result.recall, result.screened_line()  # the screen: kinds only
    # The forms below name the receipt only when the recall log holds it (a GET logs
    # nothing, so its receipt could not be resolved when the answer is posted).
    ctx["logged"] = log
    # Else each form carries an ID of this page instead: sent twice, it is recorded once.
    ctx["form_id"] = secrets.token_urlsafe(16)
    ctx["why"] = _why(result.recall)
    ctx["known_rules"] = _playbook_ids(repo)
    columns: list[Column] = []
    if result.memory is not None:
        columns.append(_memory_column(result.memory, result.brief, model_failed=bool(ctx["model_error"])))
    if mode != "on":
        columns.append(_no_memory_column(result.no_memory, task))
    ctx["columns"] = columns
    return ctx


def _refused(ctx: dict[str, Any], exc: ScarwardenError) -> dict[str, Any]:
    """The page's context for a task recall refuses: a 400 saying why above the form,
    which holds the task as typed less the control characters (invisible in a text box,
    and refused there again), saying so."""
    from scarwarden.characters import REFUSED

    kept = REFUSED.sub("", ctx["task"])
    hint = exc.hint
    if kept != ctx["task"]:
        hint = (
            "it was taken out of the task below (text pasted from elsewhere can carry "
            "invisible characters): check it, then submit it again"
        )
    message = exc.message + "".join(f"\n{p}" for p in exc.problems)
    return {**ctx, "task": kept, "status": 400, "refusal": message, "refusal_hint": hint}


def page_hinted(exc: ScarwardenError, task: str) -> ScarwardenError:
    """Recall's refusal of a task holding a control character, hinted in the page's
    words (recall's own names a file to convert with dos2unix); any other as it is."""
    from scarwarden.files.input_policy import encoding_problem, text_problem

    problem = text_problem(task.strip())
    if problem is None or exc.message != f"the task {problem}" or encoding_problem(task) is not None:
        return exc
    hint = (
        "remove it from the task and submit again (text pasted from elsewhere can carry invisible characters)"
    )
    return UsageError(exc.message, hint=hint, problems=exc.problems)


def _mode(sent: str | None) -> tuple[str, str | None]:
    """The memory mode (any case; none given: ``both``) and what is wrong with one the page
    cannot read: said on the page and not applied (it fell back to ``both`` silently)."""
    mode = (sent or "").strip().lower() or "both"
    if mode in MODES:
        return mode, None
    return "both", f"unknown memory mode {sent!r} (use {', '.join(MODES[:-1])} or {MODES[-1]}); showing both"


def _memory_column(side: Side, brief: str | None, *, model_failed: bool) -> Column:
    """The side with memory: the model's answer, else the brief an agent would get,
    else (nothing recalled) a note that a human has to answer."""
    col = Column(True, "With memory", "none")
    if side.answer is not None:
        col.kind, col.text, col.model = "answer", side.answer, side.model
        col.verification = side.verification
    elif brief is not None:
        col.kind, col.text = "brief", unwrap(brief)
        col.note = (
            "The model failed" if model_failed else "No model is configured"
        ) + ": this is the brief an agent would get."
    else:
        col.note = "Nothing relevant is remembered, so there is no answer: a human has to answer (below)."
    return col


def _no_memory_column(side: Side | None, task: str) -> Column:
    """The side without memory: the same model's answer to the bare task, else the
    bare task as a model would get it."""
    from scarwarden.answers.prompts import no_memory_brief

    col = Column(False, "Without memory", "bare")
    if side is not None and side.answer is not None:
        col.kind, col.text, col.model = "answer", side.answer, side.model
        col.note = "The same model with the bare task: no rules, nothing to cite."
    else:
        col.text = unwrap(no_memory_brief(task))
    return col


def add_task_post_route(app: Any, site: Any, repo: MemoryRepo, environ: Mapping[str, str] | None) -> None:
    """``POST /task``: the form's explicit "Recall and answer", the one that appends to
    the recall log (CSRF token, same origin; a read-only server shows the page and
    logs nothing). ``GET /task`` shows the same page and never writes."""
    from flask import request

    @app.post("/task")
    def task_post() -> Any:
        log = not site.read_only
        refused = site.refuse_write(
            nothing_can="logged",
            read_only_hint="",
            cannot="Cannot recall this task",
            reload="task page",
            read_only_shows=True,
            stale=lambda: _stale(site, repo),  # a page from before a restart: the task kept
        )
        if refused is not None:
            return refused
        ctx = task_page(
            repo,
            request.form.get("task", "").replace("\r\n", "\n"),
            mode=request.form.get("memory", "both"),
            environ=environ,
            log=log,
        )
        return site.page("task.html", ctx.pop("status", 200), **ctx)


def _stale(site: Any, repo: MemoryRepo) -> Any:
    """The 403 for a task sent from this server's address with a token not this
    process's (a page shown before the server restarted): the task page again, the task
    in its form with this server's token, nothing recalled or logged."""
    from flask import request

    from scarwarden.characters import REFUSED

    ctx = task_page(repo, None, mode=request.form.get("memory", "both"))
    ctx["task"] = REFUSED.sub("", request.form.get("task", "").replace("\r\n", "\n").strip())
    ctx["refusal"] = (
        "This page is older than the server: the form came from this server's address, but "
        "with a token this server did not make (the server restarted since the page was "
        "shown, or the form was made by hand); nothing was recalled or logged."
    )
    ctx["refusal_hint"] = "check the task below, then submit it again"
    return site.page("task.html", 403, **ctx)


def _why(recall: Any) -> dict[str, Any] | None:
    """The router's confidence and reason in ``recall --explain``'s words (issue 18)."""
    from scarwarden.recall.explain import explain_data

    if recall is None:  # memory off: no recall, no verdict to explain
        return None
    try:
        return explain_data(recall)["router"]
    except ValueError:  # a result without stats: nothing to explain
        return None


def _playbook_ids(repo: MemoryRepo) -> set[str]:
    """Every rule ID in the playbook, retired ones too: an answer citing any other
    invented it."""
    from scarwarden.index import open_index

    with open_index(repo) as index:
        return {rule.id for rule in index.rules(include_retired=True)}
