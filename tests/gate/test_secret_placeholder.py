"""The placeholder every refusal's hint asks for is no secret itself: ``curl -u
deploy:[redacted cli-password]`` was refused as a password on a command line (the value
ends at the placeholder's space: ``[redacted``), so following the hint was refused
again, and a model's answer echoing the placeholder the model client sent could not be
recorded. Every credential here is fake and built at run time (tests/fake_secrets.py)."""

from __future__ import annotations

import pytest
from conftest import git
from fake_secrets import more_secrets

from scarwarden.files.secret_scan import scan_text
from scarwarden.repo import MemoryRepo

PLACED = (
    "ran curl -u deploy:[redacted cli-password] https://ci.acme.dev/api/json",
    "ran curl --user admin:[redacted cli-password] https://nexus.acme.dev",
    "ran wget --user=ci --password=[redacted cli-password] https://files.acme.dev/a.tgz",
)


@pytest.mark.parametrize("text", PLACED)
def test_the_hints_placeholder_is_recorded(cli, demo_repo: MemoryRepo, text: str) -> None:
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    result = cli("episode", "add", "--task", "Deploy the docs", "--action", text)
    assert result.exit_code == 0, result.output
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout != before


@pytest.mark.parametrize("kind", ["curl-user", "curl-user-long", "wget-password"])
def test_the_real_password_is_still_found(kind: str) -> None:
    assert [f.kind for f in scan_text(more_secrets()[kind])] == ["cli-password"]
