"""An error quoting a 60,000-character argument printed all of it (``rule show``,
``episode show``: "no rule <60,000 characters> in the playbook"): every line of an error
is now cut at 1,000 characters, saying how long it was."""

from __future__ import annotations

import pytest
from conftest import Cli

from scarwarden.repo import MemoryRepo

LONG = "PB-" + "9" * 60_000


@pytest.mark.parametrize(
    "args",
    [["rule", "show", LONG], ["episode", "show", "ep-" + "z" * 60_000], ["rule", "show", "x" * 60_000]],
)
def test_an_error_quoting_a_huge_argument_is_cut(cli: Cli, demo_repo: MemoryRepo, args: list[str]) -> None:
    result = cli(*args)
    assert result.exit_code == 2, result.output[-300:]
    assert result.stderr.startswith("error: no ") and "characters, cut)" in result.stderr
    assert len(result.stderr) < 3_000
    assert all(len(line) <= 1_000 for line in result.stderr.splitlines())
