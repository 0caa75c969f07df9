"""Answers that cite their memory, and the amnesia toggle.

``answer_task`` recalls the rules for a task, routes it, and on ``ACT``/``ACT_AND_FLAG``
asks the answer model to follow the rules and cite each one inline; code then verifies
every citation (:mod:`scarwarden.answers.citations`). With ``memory=False`` the same model gets
the bare task and no rules: the amnesia toggle. On ``ASK_HUMAN`` no model is called:
memory has nothing, so a human must answer (the command asks and records it).

With no model configured the result carries the rule-grounded brief instead of an
answer: an agent that is itself a model can act on it. What the model is sent, and the
briefs, are :mod:`scarwarden.answers.prompts`.

Recording a run and what happened next (lineage) is :mod:`scarwarden.answers.lineage`;
the terminal layout of answers is :mod:`scarwarden.audit.answer_text`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scarwarden.answers.citations import Verification, verify_in_repo
from scarwarden.answers.prompts import brief, memory_messages, no_memory_brief, no_memory_messages
from scarwarden.answers.usage import screened_json, screened_line, usage_json
from scarwarden.errors import ExitCode, ScarwardenError, UsageError
from scarwarden.llm.client import ChatClient, ChatResponse
from scarwarden.recall.router import ACT, ACT_AND_FLAG, ASK_HUMAN
from scarwarden.repo import MemoryRepo

__all__ = ["ACT", "ACT_AND_FLAG", "ASK_HUMAN", "AnswerResult", "Side", "answer_or_brief", "answer_task"]


@dataclass
class Side:
    """One answer: with memory or without."""

    memory: bool
    answer: str | None = None
    model: str | None = None
    responses: list[ChatResponse] = field(default_factory=list)
    verification: Verification | None = None
    qc: Any = None  # scarwarden.answers.qc.QCResult

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "model": self.model,
            "usage": usage_json(self.responses),
            "screened": screened_json(self.responses),
            "verification": self.verification.to_json() if self.verification else None,
            "qc": self.qc.to_json() if self.qc is not None else None,
        }


@dataclass
class AnswerResult:
    task: str
    mode: str  # "memory" | "no-memory" | "compare"
    recall: Any = None  # RecallResult, absent in no-memory mode
    memory: Side | None = None
    no_memory: Side | None = None
    #: The rule-grounded brief, when no model is configured.
    brief: str | None = None
    model_configured: bool = True

    @property
    def verdict(self) -> str | None:
        return None if self.recall is None else self.recall.verdict

    @property
    def primary(self) -> Side | None:
        return self.memory if self.mode != "no-memory" else self.no_memory

    def screened_line(self) -> str | None:
        """What the screen replaced in the requests of both sides, in one line for a page."""
        sides = [side for side in (self.memory, self.no_memory) if side is not None]
        return screened_line([response for side in sides for response in side.responses])

    def to_json(self) -> dict[str, Any]:
        side = (self.primary or Side(self.mode != "no-memory")).to_json()
        data: dict[str, Any] = {
            "task": self.task,
            "mode": self.mode,
            "verdict": self.verdict,
            "answer": side["answer"],
            "rules": self.recall.to_json()["rules"] if self.recall is not None else [],
            "playbook_commit": self.recall.playbook_commit if self.recall is not None else None,
            "verification": side["verification"],
            "model": side["model"],
            "usage": side["usage"],
            "screened": side["screened"],
            "qc": side["qc"],
            "brief": self.brief,
            "model_configured": self.model_configured,
        }
        if self.mode == "compare":
            data["no_memory"] = (self.no_memory or Side(False)).to_json()
        return data


def _generate(client: ChatClient, messages: list[dict[str, str]], model: str, side: Side) -> str:
    reply = client.complete(messages, model=model)
    side.responses.append(reply)
    return reply.content


def answer_task(
    repo: MemoryRepo,
    task: str,
    *,
    memory: bool = True,
    compare: bool = False,
    qc: bool = False,
    client: ChatClient | None = None,
    max_retakes: int | None = None,
    limit: int | None = None,
    recalled: Any = None,
) -> AnswerResult:
    """Answer ``task`` with memory, without it (``memory=False``), or both (``compare``).

    ``client`` is a :class:`scarwarden.llm.ChatClient` or ``None`` (no model configured:
    the result carries the brief and no answers). On ``ASK_HUMAN`` the memory side has
    no answer: asking the human is the caller's job (:func:`scarwarden.answers.asking.record_human_answer`).
    ``recalled``: the task's :class:`~scarwarden.recall.RecallResult` when the caller
    already recalled (and logged) it; otherwise this recalls.
    """
    if not task.strip():
        raise UsageError("the task is empty", hint='scarwarden answer "Draft the beta post"')
    task = task.strip()  # as recall strips it ('echo TASK | scarwarden answer -' ends in a newline)
    model = repo.config.model.answer_model
    mode = _mode(memory, compare)
    result = AnswerResult(task, mode, model_configured=client is not None)
    if mode != "no-memory":
        if recalled is None:
            from scarwarden.recall.engine import recall_task

            recalled = recall_task(repo, task, limit=limit)
        result.recall = recalled
        result.memory = Side(True)
        if client is None:
            result.brief = brief(result.recall)
        elif result.recall.verdict != ASK_HUMAN and result.recall.rules:
            _answer_with_memory(repo, client, model, result, qc, max_retakes)
    if mode != "memory":
        result.no_memory = Side(False)
        if client is not None:
            result.no_memory.model = model
            result.no_memory.answer = _generate(client, no_memory_messages(task), model, result.no_memory)
        elif mode == "no-memory":
            result.brief = no_memory_brief(task)
    return result


def _mode(memory: bool, compare: bool) -> str:
    return "compare" if compare else ("memory" if memory else "no-memory")


def answer_or_brief(
    repo: MemoryRepo, task: str, *, client: ChatClient | None, **options: Any
) -> tuple[AnswerResult, str | None]:
    """:func:`answer_task`, falling back to the model-free result when the configured
    model fails (unreachable, refused, bad output): the UI and the demo still show
    what memory gives. Returns the result and the model's failure message, if any.

    The task is recalled once, before the model is asked, and both attempts share that
    recall: one request is one line in the recall log (``log=False``: none, e.g. a page
    merely loaded in the web UI)."""
    log = bool(options.pop("log", True))
    if (
        task.strip()
        and options.get("recalled") is None
        and _mode(options.get("memory", True), options.get("compare", False)) != "no-memory"
    ):
        from scarwarden.recall.engine import recall_task

        options = {**options, "recalled": recall_task(repo, task, limit=options.get("limit"), log=log)}
    try:
        return answer_task(repo, task, client=client, **options), None
    except ScarwardenError as exc:
        if client is None or exc.exit_code < ExitCode.MODEL_UNREACHABLE:
            raise
        return answer_task(repo, task, client=None, **options), exc.message


def _answer_with_memory(
    repo: MemoryRepo, client: ChatClient, model: str, result: AnswerResult, qc: bool, max_retakes: int | None
) -> None:
    side = result.memory
    assert side is not None
    side.model = model
    messages = memory_messages(result.task, result.recall)
    text = _generate(client, messages, model, side)
    if qc:
        from scarwarden.answers.qc import run_qc

        limit = repo.config.answer.qc_max_retakes if max_retakes is None else max_retakes
        side.qc = run_qc(
            client,
            model=model,
            task=result.task,
            rules=result.recall.rules,
            messages=messages,
            draft=text,
            max_retakes=limit,
            responses=side.responses,
        )
        text = side.qc.final_text
    side.answer = text
    side.verification = verify_in_repo(repo, text, result.recall)
