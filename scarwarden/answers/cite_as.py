"""The exact form of an inline citation, ``[PB-03, learnt in ep-a, ep-b]`` (SPEC section 5).

Apart from :mod:`scarwarden.answers.citations`, which parses and verifies citations,
because what shows a rule with its ``cite_as`` (``recall --json``, the MCP server, the
exports) needs the form alone: a cold ``scarwarden recall`` does not build the parser's
patterns and dataclasses for it.
"""

from __future__ import annotations

from collections.abc import Sequence


def format_citation(rule_id: str, episode_ids: Sequence[str]) -> str:
    """The exact spec form: ``[PB-03, learnt in ep-a, ep-b]``."""
    if not episode_ids:
        return f"[{rule_id}]"
    return f"[{rule_id}, learnt in {', '.join(episode_ids)}]"
