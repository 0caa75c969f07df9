"""``audit --html`` renders every episode's YAML for its page (issue 30): with libyaml's
emitter for display, the same text as the stored form's Python emitter."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from scarwarden.files.episodes import Episode, render_episode
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo

TRICKY: list[dict[str, Any]] = [
    {
        "id": "ep-aaaaaaaaaa",
        "at": "2026-01-01T00:00:00Z",
        "task": "Multi\nline: yes\n  indented",
        "action": "ünïcode — dash: 'quote' \"dq\" #hash",
        "outcome": "- dash start",
        "correction": "yes",
        "tags": ["a b", "c:d", "#x"],
        "refs": [],
    },
    {"id": "ep-bbbbbbbbbb", "at": "2026-02-03T04:05:06Z", "task": "null", "outcome": "1.5", "tags": ["true"]},
    {"id": "ep-cccccccccc", "at": "2026-02-03T04:05:06Z", "task": "x" * 500 + " y", "outcome": "~"},
]


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="needs libyaml")
def test_display_text_is_the_stored_text(demo_repo: MemoryRepo) -> None:
    with open_index(demo_repo) as index:
        episodes = [index.get_episode(e.id) for e in index.list_episodes(newest_first=True)]
    assert len(episodes) > 30
    for ep in [*episodes, *(Episode(d) for d in TRICKY)]:
        assert ep is not None
        assert ep.render(display=True) == ep.render() == render_episode(ep.data)
