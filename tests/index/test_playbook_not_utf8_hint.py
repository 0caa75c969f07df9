"""A working playbook that is not UTF-8: the index's refusal says where the byte is and
how to fix the encoding. It said "memory/playbook.md: not valid UTF-8" with the hint
"fix the playbook at the lines above", and there were no lines above."""

from __future__ import annotations

from conftest import Cli
from helpers import State

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo


def test_a_playbook_that_is_not_utf8_gets_a_hint_that_fits(cli: Cli, demo_repo: MemoryRepo) -> None:
    text = demo_repo.playbook_path.read_bytes()
    line = text.count(b"\n") + 1
    demo_repo.playbook_path.write_bytes(text + b"caf\xe9\n")  # a Latin-1 edit
    before = State.of(demo_repo)
    for args in (("recall", "Plan the offsite"), ("index",), ("answer", "Plan the offsite")):
        result = cli(*args)
        assert result.exit_code == ExitCode.CHECK_FAILED, (args, result.output)
        said = result.stderr
        assert f"not valid UTF-8 (the byte 0xE9 at byte {len(text) + 4:,}, line {line})" in said, (args, said)
        assert "at the lines above" not in said, (args, said)
        assert "save memory/playbook.md as UTF-8" in said and "iconv" in said, (args, said)
        assert "Traceback" not in result.output
    assert State.of(demo_repo) == before
