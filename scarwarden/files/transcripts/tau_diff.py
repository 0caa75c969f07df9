"""tau-bench's corrections: what a failed run should have done, derived from its ground truth.

A run's *write calls* are the tool calls that change the domain's database (WRITES:
tau-bench's airline and retail tools) and succeeded. A failed run's correction pairs
them with the ground-truth write calls of its task, call by call (``diff_writes``), and
says what should have been done instead, one ``Item`` per difference; every rule is
written out in docs/replay.md, "How a correction is derived". Moved here from the
replay benchmark (issue 29), which imports it, so ``episode import --format tau-bench``
gives the episodes the benchmark replays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Tools that change the database; anything else (reads, think, calculate, transfer) is not a write.
WRITES = (
    "book_reservation",
    "cancel_reservation",
    "update_reservation_flights",
    "update_reservation_baggages",
    "update_reservation_passengers",
    "send_certificate",
)
#: tau-bench retail's writes (no policy clauses written for them: "policy" is named).
RETAIL_WRITES = (
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
)
#: The policy clause each write falls under (section, and bullet where one key decides).
CLAUSES: dict[str, str] = {
    "book_reservation": "Book flight",
    "book_reservation:payment_methods": "Book flight, payment",
    "book_reservation:total_baggages": "Book flight, checked bag allowance",
    "book_reservation:nonfree_baggages": "Book flight, checked bag allowance",
    "book_reservation:insurance": "Book flight, travel insurance",
    "book_reservation:passengers": "Book flight, passengers",
    "cancel_reservation": "Cancel flight",
    "update_reservation_flights": "Modify flight, change flights",
    "update_reservation_flights:cabin": "Modify flight, change cabin",
    "update_reservation_flights:payment_id": "Modify flight, payment",
    "update_reservation_baggages": "Modify flight, change baggage",
    "update_reservation_passengers": "Modify flight, change passengers",
    "send_certificate": "Refund, compensation certificate",
    "refuse": "deny requests against the policy",
}
#: The arguments a correction quotes for a missing or forbidden write (what the policy turns on).
KEY_ARGS: dict[str, tuple[str, ...]] = {
    "book_reservation": (
        "flight_type",
        "cabin",
        "flights",
        "payment_methods",
        "total_baggages",
        "nonfree_baggages",
        "insurance",
    ),
    "update_reservation_flights": ("cabin", "flights", "payment_id"),
    "update_reservation_baggages": ("total_baggages", "nonfree_baggages", "payment_id"),
    "update_reservation_passengers": ("passengers",),
    "send_certificate": ("amount",),
}
_VALUE_CAP = 160


@dataclass(frozen=True)
class Call:
    """One write call: the tool's name and its arguments (numbers normalised)."""

    name: str
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class Item:
    """One thing that went wrong in a failed run, and what a lesson must say to fix it.

    kind: ``wrong`` (right call, an argument differed), ``missing`` (a ground-truth
    write never made), ``extra`` (a write the ground truth does not make), ``refuse``
    (an extra write on a task whose ground truth makes no write at all), ``output``
    (the writes were right but a value the user asked for was never said).
    """

    kind: str
    action: str
    keys: tuple[str, ...] = ()
    values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    text: str = ""
    reservation: str = ""

    @property
    def key(self) -> tuple[str, str, tuple[str, ...]]:
        """The lesson key: (kind, action, argument keys)."""
        return (self.kind, self.action, self.keys)


def norm(value: Any) -> Any:
    """Integral floats become ints (250.0 == 250), recursively."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [norm(v) for v in value]
    return value


def leaves(value: Any) -> list[str]:
    """The scalar values inside ``value``, as lower-case strings, in order."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v)]
    return [str(norm(value)).lower()]


def show(value: Any) -> str:
    """A compact human form of an argument value: lists joined with ' + '."""
    if isinstance(value, list):
        text = " + ".join(show(v) for v in value) or "none"
    elif isinstance(value, dict):
        text = " ".join(show(v) for v in value.values())
    else:
        text = str(norm(value))
    return text if len(text) <= _VALUE_CAP else text[: _VALUE_CAP - 3] + "..."


def _differing(gt: Call, ag: Call) -> tuple[str, ...] | None:
    """The argument keys that differ, or None when the calls cannot be the same write.

    Calls on a reservation match only on the same reservation: cancelling the wrong
    reservation is a missing cancellation plus an extra one, not a wrong argument.
    """
    if gt.name != ag.name:
        return None
    rid = gt.kwargs.get("reservation_id")
    if rid is not None and ag.kwargs.get("reservation_id") != rid:
        return None
    keys = set(gt.kwargs) | set(ag.kwargs)
    return tuple(sorted(k for k in keys if gt.kwargs.get(k) != ag.kwargs.get(k)))


def diff_writes(
    gt: list[Call], agent: list[Call]
) -> list[tuple[str, Call | None, Call | None, tuple[str, ...]]]:
    """Pair ground-truth writes with the agent's, in ground-truth order.

    Each ground-truth call takes the unused agent call of the same tool (and the same
    reservation) with the fewest differing arguments (the first on a tie): equal is
    fine, else ``wrong``; none left is ``missing``. Agent calls left over are
    ``extra``, or ``refuse`` when the ground truth makes no write at all.
    """
    used: set[int] = set()
    out: list[tuple[str, Call | None, Call | None, tuple[str, ...]]] = []
    for g in gt:
        best: tuple[int, tuple[str, ...]] | None = None
        for i, a in enumerate(agent):
            keys = None if i in used else _differing(g, a)
            if keys is not None and (best is None or len(keys) < len(best[1])):
                best = (i, keys)
        if best is None:
            out.append(("missing", g, None, ()))
            continue
        used.add(best[0])
        if best[1]:
            out.append(("wrong", g, agent[best[0]], best[1]))
    left = "refuse" if not gt else "extra"
    out.extend((left, None, a, ()) for i, a in enumerate(agent) if i not in used)
    return out


def id_values(call: Call) -> tuple[str, ...]:
    """What identifies a write: its reservation, else its flights (book), else its amount."""
    kw = call.kwargs
    if "reservation_id" in kw:
        return (str(kw["reservation_id"]).lower(),)
    if call.name == "book_reservation":
        return tuple(str(f.get("flight_number", "")).lower() for f in kw.get("flights") or [])
    return tuple(leaves(kw.get("amount", "")))


def args_text(call: Call) -> str:
    """The call's policy-relevant arguments (KEY_ARGS), compact; flights by number only."""
    parts = []
    for key in KEY_ARGS.get(call.name, ()):
        if key not in call.kwargs:
            continue
        value = call.kwargs[key]
        if key == "flights":
            value = [f.get("flight_number", "?") for f in value or []]
        parts.append(f"{key} {show(value)}")
    return ", ".join(parts)


def about(call: Call) -> str:
    """Whom the write is about: its reservation, else its user."""
    rid, user = call.kwargs.get("reservation_id"), call.kwargs.get("user_id")
    return f" on reservation {rid}" if rid else (f" for user {user}" if user else "")


def _with(call: Call) -> str:
    args = args_text(call)
    return f" ({args})" if args else ""


def _diff_leaves(gt_value: Any, ag_value: Any) -> tuple[str, ...]:
    """Leaves the ground truth has and the agent's value lacks; else the agent's extra ones."""
    ag = set(leaves(ag_value))
    only_gt = [x for x in leaves(gt_value) if x not in ag]
    if only_gt:
        return tuple(dict.fromkeys(only_gt))
    gt = set(leaves(gt_value))
    return tuple(dict.fromkeys(x for x in leaves(ag_value) if x not in gt))


def clause_of(kind: str, action: str, keys: tuple[str, ...] = ()) -> str:
    """The policy clause(s) an item falls under (CLAUSES), as one parenthesis-safe phrase."""
    names = [CLAUSES[f"{action}:{k}"] for k in keys if f"{action}:{k}" in CLAUSES]
    names = names or ([CLAUSES[action]] if action in CLAUSES else [])
    if kind == "refuse":
        names.append(CLAUSES["refuse"])
    return "policy, " + " / ".join(dict.fromkeys(names)) if names else "policy"


def make_item(kind: str, gt: Call | None, ag: Call | None, keys: tuple[str, ...]) -> Item:
    """One diff entry as an Item with its correction sentence (wording: docs/replay.md).

    The policy clause goes inside the item's first sentence, so that the sentence that
    names the write also carries the item's direction (do it / do not) for the judge.
    """
    call = gt if gt is not None else ag
    assert call is not None
    rid = str(call.kwargs.get("reservation_id") or "")
    clause = clause_of(kind, call.name, keys)
    if kind == "wrong" and gt is not None and ag is not None:
        sets = "; ".join(
            f"set {k} to {show(gt.kwargs.get(k))} instead of {show(ag.kwargs.get(k))}" for k in keys
        )
        values = {k: _diff_leaves(gt.kwargs.get(k), ag.kwargs.get(k)) for k in keys}
        return Item(kind, gt.name, keys, values, f"Fix {gt.name}{about(gt)} ({clause}): {sets}.", rid)
    if kind == "missing":
        text = f"Call {call.name}{about(call)}{_with(call)} ({clause}): the run left this write out."
    elif kind == "refuse":
        text = (
            f"Do not call {call.name}{about(call)}{_with(call)} ({clause}): refuse the request;"
            " this task ends with no write."
        )
    else:
        text = (
            f"Do not call {call.name}{about(call)}{_with(call)} ({clause}):"
            " the ground truth makes no such write."
        )
    return Item(kind, call.name, (), {"id": id_values(call)}, text, rid)


def derive_items(gt: list[Call], agent: list[Call], outputs_missed: list[str]) -> list[Item]:
    """Everything that went wrong, in order: write differences, then unsaid outputs."""
    items = [make_item(kind, g, a, keys) for kind, g, a, keys in diff_writes(gt, agent)]
    if outputs_missed:
        said = ", ".join(outputs_missed)
        text = f"Tell the user {said}: the figure they asked for was missing from the answer."
        items.append(Item("output", "", (), {"output": tuple(o.lower() for o in outputs_missed)}, text))
    return items
