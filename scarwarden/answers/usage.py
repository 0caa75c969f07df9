"""Token usage of one answer, and what the screen replaced in its requests, as the JSON
outputs report them."""

from __future__ import annotations

from collections.abc import Sequence

from scarwarden.llm.client import ChatResponse, total_usage


def usage_json(responses: Sequence[ChatResponse]) -> dict[str, object] | None:
    """Token usage summed over the calls of one answer (``None``: no call was made).

    Shared by an answer's sides (:mod:`scarwarden.answers.answer`) and a reviewed
    draft (:mod:`scarwarden.answers.qc`), so both report usage the same way.
    """
    return total_usage(responses).to_json(calls=len(responses)) if responses else None


def screened_json(responses: Sequence[ChatResponse]) -> dict[str, list[str]] | None:
    """The kinds the screen (:mod:`scarwarden.llm.screen`) replaced in the requests of one
    answer (``redacted``: credentials, and personal data ``privacy: refuse`` covers) and
    the personal data ``privacy: warn`` sent (``personal``); never a value. ``None``: no
    call was made."""
    if not responses:
        return None
    return {
        "redacted": list(dict.fromkeys(kind for r in responses for kind in r.redacted)),
        "personal": list(dict.fromkeys(kind for r in responses for kind in r.personal)),
    }


def screened_line(responses: Sequence[ChatResponse]) -> str | None:
    """:func:`screened_json` as one short line for a page (the web UI's task page), or
    ``None`` when the screen changed nothing."""
    data = screened_json(responses)
    if not data or not (data["redacted"] or data["personal"]):
        return None
    said = [f"{', '.join(data['redacted'])} replaced by a placeholder"] if data["redacted"] else []
    said += [f"personal data sent as it was: {kind} (privacy: warn)" for kind in data["personal"]]
    return f"Screened before it was sent to the model: {'; '.join(said)}."
