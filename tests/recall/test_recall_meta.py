"""A recall reads the meta values it needs, its receipt's and its log's included, in one
statement: each was a statement of its own (issue 30, recall's fixed cost)."""

from __future__ import annotations

import json

from helpers import EP, FIXED, write_episode, write_playbook

from scarwarden.index import open_index
from scarwarden.recall.engine import recall
from scarwarden.repo import MemoryRepo

TASK = "Put the new feature behind a flag before the release"


def test_a_recall_reads_its_meta_values_in_one_statement(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, EP, task="Ship the feature flag release", correction="Flag it first.")
    write_playbook(memory_repo, FIXED, commit=True)
    with open_index(memory_repo) as index:
        first = recall(index, TASK, limit=10)  # the first may ask git and remember the answers
        trace: list[str] = []
        index.conn.set_trace_callback(trace.append)
        again = recall(index, TASK, limit=10)
        index.conn.set_trace_callback(None)
    single = [sql for sql in trace if sql.startswith("SELECT value FROM meta WHERE key =")]
    assert single == ["SELECT value FROM meta WHERE key = 'playbook_error'"]
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(first.to_json(), sort_keys=True)
    assert again.playbook_commit is not None and again.receipt is not None
