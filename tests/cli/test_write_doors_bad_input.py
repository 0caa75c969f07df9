"""Bad input at the doors that write the ledger and the playbook (episode add, episode
import, redact, ask): a clear error, the documented exit code, and nothing written."""

from __future__ import annotations

from conftest import Cli
from helpers import State

from scarwarden.repo import MemoryRepo


def test_a_receipt_nested_too_deeply_is_refused_as_input(demo_repo: MemoryRepo, cli: Cli) -> None:
    before = State.of(demo_repo)
    deep = '{"receipt": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result = cli("episode", "add", "--task", "Deep", "--outcome", "o", "--receipt", deep)
    assert result.exit_code == 1, result.output
    assert "--receipt: not JSON (nested too deeply)" in result.stderr
    assert "internal error" not in result.stderr
    assert State.of(demo_repo) == before
