"""``redact --reason`` with a 120,000-character reason failed with "redact: invalid
episode input ... field 'outcome': episode is at least 120,117 bytes": the user never
gave an 'outcome'. The reason is bounded (10,000 characters) and a longer one is
refused by its own name, exit 2, nothing changed; one at the bound, in 4-byte
characters, is recorded and passes the gate."""

from __future__ import annotations

from conftest import Cli, git

from scarwarden.repo import MemoryRepo

REDACTED = "ep-hkgnqdz88f"  # an episode of the demo ledger


def _state(repo: MemoryRepo) -> tuple[str, str]:
    return git(repo.root, "rev-parse", "HEAD").stdout, git(repo.root, "status", "--porcelain").stdout


def test_a_reason_over_the_bound_is_refused_by_its_name(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = _state(demo_repo)
    for reason in ("x " * 60_000, "y" * 10_001):
        result = cli("redact", REDACTED, "--reason", reason)
        assert result.exit_code == 2, result.output[-500:]
        chars = len(" ".join(reason.split()))
        assert f"--reason is {chars:,} characters; the limit is 10,000" in result.stderr, result.stderr
        assert "outcome" not in result.stderr and "nothing was changed" in result.stderr
        assert _state(demo_repo) == before


def test_a_reason_at_the_bound_is_recorded(cli: Cli, demo_repo: MemoryRepo) -> None:
    result = cli("redact", REDACTED, "--fields", "action", "--reason", "\U0001f600" * 10_000)
    assert result.exit_code == 0, result.output[-500:]
    assert cli("check", "--all").exit_code == 0
