"""Token usage of one answer, as the JSON outputs report it."""

from __future__ import annotations

from collections.abc import Sequence

from scarwarden.llm.client import ChatResponse, total_usage


def usage_json(responses: Sequence[ChatResponse]) -> dict[str, object] | None:
    """Token usage summed over the calls of one answer (``None``: no call was made).

    Shared by an answer's sides (:mod:`scarwarden.answers.answer`) and a reviewed
    draft (:mod:`scarwarden.answers.qc`), so both report usage the same way.
    """
    return total_usage(responses).to_json(calls=len(responses)) if responses else None
