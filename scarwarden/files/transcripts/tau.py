"""tau-bench's recorded runs as episodes: ``episode import --format tau-bench``.

A record (tau-bench's ``results`` file: ``task_id``, ``trial``, ``reward``, ``info``
with the task's instruction and ground-truth actions, ``traj`` the chat messages) is
read as a :class:`Run`: the agent's successful write calls from its trajectory, the
ground-truth writes, the figures it should have said, the facts its reads showed; a
failed run's correction is derived from the ground truth (:mod:`.tau_diff`), never
invented. :func:`episode_of` gives the episode: the task is the instruction (what the
simulated user was told to want), the action the write calls, the outcome the reward.
Moved from the replay benchmark (issue 29), which replays exactly these episodes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from scarwarden.files.transcripts.tau_diff import (
    RETAIL_WRITES,
    WRITES,
    Call,
    Item,
    about,
    args_text,
    derive_items,
    norm,
)
from scarwarden.text import stems, tag_stems

#: The tools whose calls change the database, in both tau-bench domains.
WRITE_TOOLS = frozenset(WRITES + RETAIL_WRITES)

ACTION_TAGS: dict[str, tuple[str, ...]] = {
    "book_reservation": ("book",),
    "cancel_reservation": ("cancel",),
    "update_reservation_flights": ("change",),
    "update_reservation_baggages": ("bag",),
    "update_reservation_passengers": ("passenger",),
    "send_certificate": ("certificate",),
    "": ("figures",),  # an output item: a figure the user asked for
}
#: Tags for the argument a wrong write got wrong.
KEY_TAGS = {
    "cabin": "cabin",
    "payment_methods": "payment",
    "payment_id": "payment",
    "total_baggages": "bag",
    "nonfree_baggages": "bag",
    "passengers": "passenger",
    "insurance": "insurance",
}
#: Topic tags taken from the instruction when all their words are in it (stems compared).
TOPIC_TAGS = (
    "cancel",
    "book",
    "change",
    "upgrade",
    "downgrade",
    "cabin",
    "business",
    "economy",
    "basic-economy",
    "bag",
    "baggage",
    "insurance",
    "certificate",
    "gift-card",
    "credit-card",
    "refund",
    "compensation",
    "delay",
    "passenger",
    "nonstop",
    "round-trip",
    "one-way",
    "gold",
    "silver",
)
MAX_TAGS = 8


@dataclass
class Run:
    """One recorded run of one task, with its derived correction."""

    task_id: int
    trial: int
    reward: float
    instruction: str
    gt_writes: list[Call]
    agent_writes: list[Call]
    failed_attempts: int
    transferred: bool
    outputs: list[str]
    outputs_missed: list[str]
    facts: str
    items: list[Item]

    @property
    def failed(self) -> bool:
        return self.reward < 1.0

    @property
    def domain(self) -> str:
        """``retail`` when a write is retail's, else ``airline`` (tau-bench's two domains)."""
        names = {c.name for c in (*self.gt_writes, *self.agent_writes)}
        return "retail" if names & set(RETAIL_WRITES) else "airline"

    @property
    def kind(self) -> str:
        """The task's kind: the set of ground-truth write tools, or ``no-write``."""
        names = sorted({c.name for c in self.gt_writes})
        return "+".join(names) if names else "no-write"


def agent_calls(traj: list[dict[str, Any]]) -> tuple[list[Call], int, bool, list[tuple[str, str]]]:
    """(successful write calls, failed write attempts, transferred?, (tool, reply) of reads)."""
    pending: dict[str, dict[str, Any]] = {}
    writes: list[Call] = []
    failed = 0
    transferred = False
    replies: list[tuple[str, str]] = []
    for msg in traj:
        for call in msg.get("tool_calls") or []:
            pending[call["id"]] = call["function"]
        if msg.get("role") != "tool":
            continue
        name, content = msg.get("name", ""), str(msg.get("content", ""))
        transferred = transferred or name == "transfer_to_human_agents"
        if name not in WRITE_TOOLS:
            replies.append((name, content))
        elif content.startswith("Error"):
            failed += 1
        else:
            args = json.loads(pending[msg["tool_call_id"]]["arguments"] or "{}")
            writes.append(Call(name, norm(args)))
    return writes, failed, transferred, replies


def said_values(traj: list[dict[str, Any]], outputs: list[str]) -> list[str]:
    """The expected outputs the agent never said (tau-bench's check: commas ignored)."""
    said = " ".join(str(m.get("content") or "") for m in traj if m.get("role") == "assistant")
    said = said.replace(",", "").lower()
    return [o for o in outputs if o.replace(",", "").lower() not in said]


def facts_text(replies: list[tuple[str, str]], items: list[Item]) -> str:
    """What the run's own read calls showed about the user and the reservations at fault.

    Membership (get_user_details) and, for each reservation an item is about, its cabin,
    insurance and booking time (get_reservation_details): the facts the policy's
    clauses turn on. Empty when the run never read them.
    """
    membership = ""
    reservations: dict[str, dict[str, Any]] = {}
    for name, content in replies:
        try:
            data = json.loads(content)
        except (ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        if name == "get_user_details":
            membership = str(data.get("membership") or "")
        elif name == "get_reservation_details" and "reservation_id" in data:
            reservations[str(data["reservation_id"])] = data
    wanted = [i.reservation for i in items if i.reservation]
    parts = [f"{membership} member"] if membership else []
    for rid in dict.fromkeys(wanted):
        res = reservations.get(rid)
        if res is None:
            continue
        insured = "with" if str(res.get("insurance")) == "yes" else "without"
        parts.append(
            f"reservation {rid} {res.get('cabin', '?')} cabin, {insured} travel insurance,"
            f" booked {str(res.get('created_at', '?'))[:16]}"
        )
    return ("Context: " + "; ".join(parts) + ".") if parts else ""


def make_run(record: dict[str, Any]) -> Run:
    """One dataset record as a Run, with what went wrong (empty for a success)."""
    task = record["info"]["task"]
    gt = [Call(a["name"], norm(a["kwargs"])) for a in task["actions"] if a["name"] in WRITE_TOOLS]
    writes, failed_attempts, transferred, replies = agent_calls(record["traj"])
    outputs = [str(o) for o in task.get("outputs") or []]
    reward = float(record["reward"])
    missed = said_values(record["traj"], outputs) if reward < 1.0 else []
    items = derive_items(gt, writes, missed) if reward < 1.0 else []
    return Run(
        task_id=int(record["task_id"]),
        trial=int(record["trial"]),
        reward=reward,
        instruction=str(task["instruction"]),
        gt_writes=gt,
        agent_writes=writes,
        failed_attempts=failed_attempts,
        transferred=transferred,
        outputs=outputs,
        outputs_missed=missed,
        facts=facts_text(replies, items) if items else "",
        items=items,
    )


def action_text(run: Run) -> str:
    """What the agent did: its successful write calls with their key arguments."""
    calls = [f"{c.name}{about(c)} ({args_text(c)})" for c in run.agent_writes]
    text = "Write calls: " + "; ".join(calls) + "." if calls else "Made no write call."
    if run.failed_attempts:
        text += f" {run.failed_attempts} write attempt(s) answered with an error."
    if run.transferred:
        text += " Transferred the user to a human agent."
    return text


def outcome_text(run: Run) -> str:
    """Reward, and a count of what went wrong by kind."""
    if not run.failed:
        return "Reward 1: the database ended as the ground truth says."
    counts = Counter(i.kind for i in run.items)
    named = {
        "wrong": "wrong argument",
        "missing": "missing write",
        "extra": "extra write",
        "refuse": "write on a request to refuse",
        "output": "figure left unsaid",
    }
    what = ", ".join(f"{n} {named[k]}{'s' if n > 1 else ''}" for k, n in counts.items())
    return f"Reward 0: {what or 'the writes matched; the failure is elsewhere in the conversation'}."


def correction_text(run: Run) -> str:
    """The correction: every item's sentence (with its policy clause), then the run's facts."""
    if not run.items:
        return ""
    parts = [i.text for i in run.items]
    if run.facts:
        parts.append(run.facts)
    return " ".join(parts)


def tags_of(run: Run, topics: bool = False) -> list[str]:
    """Tags: the writes the run is about (ACTION_TAGS), the arguments it got wrong
    (KEY_TAGS), ``refuse`` for a request to refuse; with ``topics``, also the topic words
    its instruction names (TOPIC_TAGS; the first design, kept to show its effect)."""
    names = [c.name for c in (*run.gt_writes, *run.agent_writes)]
    names += [i.action for i in run.items]
    tags = [t for n in dict.fromkeys(names) for t in ACTION_TAGS.get(n, ())]
    tags += [KEY_TAGS[k] for i in run.items for k in i.keys if k in KEY_TAGS]
    tags += ["refuse"] if any(i.kind == "refuse" for i in run.items) else []
    if topics:
        have = set(stems(run.instruction))
        tags += [t for t in TOPIC_TAGS if set(tag_stems(t)) <= have]
    return list(dict.fromkeys(tags))[:MAX_TAGS]


def episode_of(run: Run, at: str, topics: bool = False, agent: str = "gpt-4o-airline") -> dict[str, Any]:
    """The episode recorded for one run (input form of `scarwarden episode add --file`)."""
    episode: dict[str, Any] = {
        "at": at,
        "agent": agent,
        "task": run.instruction,
        "action": action_text(run),
        "outcome": outcome_text(run),
    }
    if run.items:
        episode["correction"] = correction_text(run)
        episode["corrected_by"] = f"tau-{run.domain} ground truth"
    episode["tags"] = tags_of(run, topics)
    episode["source"] = "correction" if run.items else "outcome"
    episode.update({"x-task-id": run.task_id, "x-trial": run.trial, "x-reward": run.reward})
    return episode
