"""The recall-log page links each recall to the episodes that carry its receipt (issue 20)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")
from scarwarden.audit.web.app import create_app  # noqa: E402

TASK = "Post our discount code on Twitter"


def test_each_recall_links_to_the_episodes_carrying_its_receipt(cli: Any, demo_repo: MemoryRepo) -> None:
    printed = json.loads(cli("recall", "--json", TASK).stdout)["receipt"]
    cli("recall", "Book travel for the Berlin conference")  # a recall nobody recorded
    out = cli(
        "episode", "add", "--task", TASK, "--action", "Kept it out", "--receipt", printed["receipt"], "--json"
    )
    assert out.exit_code == 0, out.output
    episode = json.loads(out.stdout)["id"]
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    page = client.get("/log").get_data(as_text=True)
    row = next(r for r in page.split("<tr") if TASK in r)
    assert f'<a href="/episodes/{episode}" title="carries receipt {printed["receipt"]}">{episode}</a>' in row
    other = next(r for r in page.split("<tr") if "Berlin" in r)
    assert "not recorded" in other and "/episodes/" not in other
