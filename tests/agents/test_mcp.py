"""``scarwarden mcp`` driven by the SDK's own client over stdio (a real MCP client).

Every test spawns ``python -m scarwarden --repo <repo> mcp`` as a subprocess and talks
to it with ``mcp.Client``; each async body runs under its own ``anyio.run`` so no event
loop outlives a test.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import git

from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.repo import MemoryRepo

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

LINKEDIN = "Draft a LinkedIn post announcing our beta"
DISCOUNT = "Post our discount code on Twitter"
UNKNOWN = "Book travel for the Berlin conference"


def run_client(
    root: Path, body: Callable[[Client], Awaitable[Any]], *args: str, local_repo: bool = False
) -> Any:
    """Start the server on ``root`` and run ``body(client)`` against it."""

    async def main() -> Any:
        async with open_client(root, *args, local_repo=local_repo) as client:
            return await body(client)

    return anyio.run(main)


def open_client(root: Path, *args: str, local_repo: bool = False) -> Client:
    """``scarwarden --repo ROOT mcp``, or (``local_repo``) ``scarwarden mcp --repo ROOT``
    started from another directory, the form client configs use."""
    argv = ["mcp", "--repo", str(root)] if local_repo else ["--repo", str(root), "mcp"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "scarwarden", *argv, *args],
        env=dict(os.environ),
        cwd=str(root.parent if local_repo else root),
    )
    return Client(params, read_timeout_seconds=120)


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    # The text block carries the same JSON, for clients that ignore structured content.
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return "\n".join(block.text for block in result.content)


def ledger_state(root: Path) -> tuple[str, list[str]]:
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    files = sorted(p.relative_to(root).as_posix() for p in (root / "memory").rglob("*.yaml"))
    return head, files


def test_tools_resources_and_prompt_are_listed_with_schemas(demo_repo: MemoryRepo) -> None:
    async def body(client: Client) -> tuple[Any, ...]:
        return (
            await client.list_tools(),
            await client.list_resources(),
            await client.list_resource_templates(),
            await client.list_prompts(),
            client.instructions,
        )

    tools, resources, templates, prompts, instructions = run_client(demo_repo.root, body)
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {
        "recall",
        "record_episode",
        "ask_human_answer",
        "confirm_rule",
        "get_rule",
        "get_episode",
        "verify_citations",
        "distill",
        "audit_image",
    }
    required = {name: set(tool.input_schema.get("required", [])) for name, tool in by_name.items()}
    assert required == {
        "recall": {"task"},
        "record_episode": {"task"},
        "ask_human_answer": {"task", "answer"},
        "confirm_rule": {"task", "rule_id"},
        "get_rule": {"rule_id"},  # as the resource templates name them (issue 18)
        "get_episode": {"episode_id"},
        "verify_citations": {"task", "text"},
        "distill": set(),
        "audit_image": {"task"},
    }
    episode_props = by_name["record_episode"].input_schema["properties"]
    assert {"task", "action", "outcome", "correction", "tags", "refs", "rules_applied"} <= set(episode_props)
    # Every parameter is described, so a model knows what to pass.
    for tool in by_name.values():
        assert len(tool.description or "") > 80, tool.name
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    assert by_name["distill"].input_schema["properties"]["dry_run"]["default"] is True
    assert "--allow-distill-commit" in by_name["distill"].description
    assert by_name["recall"].annotations.read_only_hint is True
    assert by_name["record_episode"].annotations.read_only_hint is False
    assert [r.uri for r in resources.resources] == ["scarwarden://playbook"]
    assert {t.uri_template for t in templates.resource_templates} == {
        "scarwarden://rule/{rule_id}",
        "scarwarden://episode/{episode_id}",
    }
    assert [p.name for p in prompts.prompts] == ["use_memory"]
    assert "[PB-NN, learnt in ep-" in instructions


def test_recall_returns_verdicts_rules_and_instructions(demo_repo: MemoryRepo, cli: Any) -> None:
    async def body(client: Client) -> list[dict[str, Any]]:
        return [
            data(await client.call_tool("recall", {"task": task}))
            for task in (LINKEDIN, DISCOUNT, UNKNOWN, "Refund a customer")
        ]

    linkedin, discount, unknown, weak = run_client(demo_repo.root, body)
    assert linkedin["verdict"] == "ACT"
    assert linkedin["rules"][0]["id"] == "PB-01"
    first = linkedin["rules"][0]
    assert first["episode_ids"] == ["ep-hkgnqdz88f", "ep-vd4adns6h9", "ep-72r3dswafq"]
    assert "linkedin" in first["matched_tags"]
    assert linkedin["cite_as"]["PB-01"] == "[PB-01, learnt in ep-hkgnqdz88f, ep-vd4adns6h9, ep-72r3dswafq]"
    assert "[PB-01, learnt in ep-hkgnqdz88f" in linkedin["instructions"]
    assert "record_episode" in linkedin["instructions"]
    assert discount["rules"][0]["id"] == "PB-02"
    assert unknown["verdict"] == "ASK_HUMAN"
    assert "ask_human_answer" in unknown["instructions"]
    assert unknown["rules"] == [] and unknown["cite_as"] == {}
    assert weak["verdict"] == "ACT_AND_FLAG"
    assert "assumptions" in weak["instructions"]
    assert weak["cite_as"]["PB-05"] in weak["instructions"]
    # The same JSON as `recall --json`, plus the two MCP keys.
    via_cli = json.loads(cli("recall", LINKEDIN, "--json").stdout)
    assert {k: v for k, v in linkedin.items() if k not in ("cite_as", "instructions")} == via_cli


def test_record_episode_commits_a_valid_episode(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    before = git(root, "rev-list", "--count", "HEAD").stdout.strip()

    async def body(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        made = data(
            await client.call_tool(
                "record_episode",
                {
                    "task": "Draft a LinkedIn post about the new pricing",
                    "action": "Opened with the price table",
                    "correction": "Open with the reader's pain, as PB-01 says",
                    "tags": ["LinkedIn", "post"],
                    "rules_applied": ["PB-01"],
                    "agent": "writer",
                    "source": "correction",
                },
            )
        )
        shown = data(await client.call_tool("get_episode", {"episode_id": made["id"]}))
        return made, shown

    made, shown = run_client(root, body)
    path = root / made["path"]
    raw = path.read_bytes()
    ep = parse_episode_bytes(raw, path=made["path"], episodes_dir=demo_repo.episodes_rel)
    assert ep.id == made["id"]
    assert ep.tags == ["linkedin", "post"]
    assert ep.get("rules_applied") == ["PB-01"]
    assert made["commit"] == git(root, "rev-parse", "HEAD").stdout.strip()
    assert git(root, "rev-list", "--count", "HEAD").stdout.strip() == str(int(before) + 1)
    files = git(root, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert files == [made["path"]]
    message = git(root, "log", "-1", "--format=%B").stdout
    assert f"Scarwarden-Episode: {made['id']}" in message
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == ""
    assert shown["yaml"] == raw.decode("utf-8")
    assert shown["path"] == made["path"]


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (
            {"task": "Post the launch", "outcome": "ok", "tags": ["Not A Slug!"]},
            "tag 'Not A Slug!' is not a slug",
        ),
        ({"task": "Post the launch"}, "at least one of action, outcome, correction"),
        ({"task": "Post the launch", "outcome": "ok", "refs": ["../../etc/passwd"]}, "refs"),
        ({"outcome": "no task given"}, "task"),
    ],
)
def test_invalid_episode_is_a_tool_error_and_writes_nothing(
    demo_repo: MemoryRepo, arguments: dict[str, Any], expected: str
) -> None:
    root = demo_repo.root
    state = ledger_state(root)

    async def body(client: Client) -> Any:
        return await client.call_tool("record_episode", arguments)

    message = error_text(run_client(root, body))
    assert expected in message
    assert ledger_state(root) == state
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_invalid_episode_message_matches_the_cli(demo_repo: MemoryRepo, cli: Any) -> None:
    async def body(client: Client) -> Any:
        return await client.call_tool("record_episode", {"task": "x", "tags": ["Bad Tag"], "outcome": "y"})

    message = error_text(run_client(demo_repo.root, body))
    assert "invalid episode input; nothing was written" in message
    assert "hint: tags use a-z, 0-9 and '-' only" in message
    via_cli = cli("episode", "add", "--task", "x", "--tag", "Bad Tag", "--outcome", "y")
    assert via_cli.exit_code == 1
    # Same problem lines; the tool's do not repeat its name (said in the first line, issue 27).
    cli_lines = [line.replace("  episode: ", "  ") for line in via_cli.stderr.splitlines()[1:]]
    assert message.splitlines()[1:] == cli_lines


def test_concurrent_record_episode_calls_all_land(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    before = int(git(root, "rev-list", "--count", "HEAD").stdout)

    async def record(client: Client, n: int) -> dict[str, Any]:
        return data(
            await client.call_tool(
                "record_episode",
                {"task": f"Concurrent task {n}", "outcome": f"outcome {n}", "tags": ["load"]},
            )
        )

    async def main() -> list[dict[str, Any]]:
        # Two calls at once in one session, and two sessions (two server processes)
        # writing at the same time: the thread lock and the ledger's flock.
        async with open_client(root) as one, open_client(root) as two:
            results: list[dict[str, Any]] = []

            async def go(client: Client, n: int) -> None:
                results.append(await record(client, n))

            async with anyio.create_task_group() as tg:
                tg.start_soon(go, one, 1)
                tg.start_soon(go, one, 2)
                tg.start_soon(go, two, 3)
                tg.start_soon(go, two, 4)
            return results

    results = anyio.run(main)
    assert len({r["id"] for r in results}) == 4
    assert int(git(root, "rev-list", "--count", "HEAD").stdout) == before + 4
    committed = set(
        git(root, "log", f"-{4}", "--format=%(trailers:key=Scarwarden-Episode,valueonly)").stdout.split()
    )
    assert committed == {r["id"] for r in results}
    for r in results:
        assert (root / r["path"]).is_file()
        assert git(root, "ls-files", "--error-unmatch", r["path"]).returncode == 0
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_get_rule_returns_cited_episodes_word_for_word(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root

    async def body(client: Client) -> tuple[Any, ...]:
        return (
            data(await client.call_tool("get_rule", {"rule_id": "pb-01"})),
            await client.call_tool("get_rule", {"rule_id": "PB-99"}),
        )

    audit, missing = run_client(root, body)
    assert audit["rule"]["id"] == "PB-01"
    assert audit["rule"]["title"] == "Lead LinkedIn posts with the reader's pain"
    assert [e["id"] for e in audit["episodes"]] == audit["rule"]["episode_ids"]
    for ep in audit["episodes"]:
        assert ep["found"] is True
        assert ep["yaml"] == (root / ep["path"]).read_text(encoding="utf-8")
        assert ep["episode"]["id"] == ep["id"]
    assert audit["history"][0]["kind"] == "introduced"
    assert (
        audit["history"][0]["commit"]
        == git(root, "log", "--format=%H", "--", "memory/playbook.md").stdout.split()[-1]
    )
    message = error_text(missing)
    assert "no rule PB-99 in the playbook" in message
    assert "hint:" in message


def test_resources_and_prompt_are_readable(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    ep_path = next((root / "memory" / "episodes").rglob("ep-hkgnqdz88f.yaml"))

    async def body(client: Client) -> tuple[Any, ...]:
        playbook = await client.read_resource("scarwarden://playbook")
        rule = await client.read_resource("scarwarden://rule/PB-02")
        episode = await client.read_resource("scarwarden://episode/ep-hkgnqdz88f")
        try:
            await client.read_resource("scarwarden://episode/ep-doesnotexist")
            missing = None
        except Exception as exc:  # the SDK raises MCPError for a failed read
            missing = str(exc)
        prompt = await client.get_prompt("use_memory", {"task": LINKEDIN})
        return playbook, rule, episode, missing, prompt

    playbook, rule, episode, missing, prompt = run_client(root, body, local_repo=True)
    assert playbook.contents[0].text == (root / "memory/playbook.md").read_text(encoding="utf-8")
    assert playbook.contents[0].mime_type == "text/markdown"
    rule_text = rule.contents[0].text
    assert rule_text.startswith("## PB-02: Never share discount codes on public social media")
    assert "- Cite as: [PB-02, learnt in ep-wmjgdnc59j, ep-56m702j8dv, ep-dqq3bkemex]" in rule_text
    wmj = next((root / "memory" / "episodes").rglob("ep-wmjgdnc59j.yaml")).read_text()
    assert wmj.rstrip("\n") in rule_text
    assert episode.contents[0].text == ep_path.read_text(encoding="utf-8")
    assert missing is not None and "no episode ep-doesnotexist in the ledger" in missing
    text = prompt.messages[0].content.text
    assert "[PB-NN, learnt in ep-" in text and LINKEDIN in text and "record_episode" in text


def test_ask_human_answer_records_a_committed_episode(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root

    async def body(client: Client) -> tuple[Any, ...]:
        asked = data(await client.call_tool("recall", {"task": UNKNOWN}))
        made = data(
            await client.call_tool(
                "ask_human_answer",
                {"task": UNKNOWN, "answer": "Book economy on Lufthansa and ask finance first."},
            )
        )
        empty = await client.call_tool("ask_human_answer", {"task": UNKNOWN, "answer": "  "})
        return asked, made, empty

    asked, made, empty = run_client(root, body)
    assert asked["verdict"] == "ASK_HUMAN"
    raw = (root / made["path"]).read_bytes()
    ep = parse_episode_bytes(raw, path=made["path"], episodes_dir=demo_repo.episodes_rel)
    assert ep.get("source") == "human-answer"
    assert ep.get("correction") == "Book economy on Lufthansa and ask finance first."
    assert made["commit"] == git(root, "rev-parse", "HEAD").stdout.strip()
    assert "'answer' is empty" in error_text(empty)


def test_recall_shows_candidates_and_confirm_rule_records_the_confirmation(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    task = "Book a table for the team dinner"

    async def body(client: Client) -> tuple[Any, ...]:
        asked = data(await client.call_tool("recall", {"task": task}))
        made = data(await client.call_tool("confirm_rule", {"task": task, "rule_id": "pb-6"}))
        unknown = await client.call_tool("confirm_rule", {"task": task, "rule_id": "PB-99"})
        unshown = await client.call_tool("confirm_rule", {"task": task, "rule_id": "PB-01"})
        return asked, made, unknown, unshown

    head = git(root, "rev-parse", "HEAD").stdout.strip()
    asked, made, unknown, unshown = run_client(root, body)
    assert asked["verdict"] == "ASK_HUMAN" and asked["rules"] == []
    assert "PB-06" in [c["id"] for c in asked["candidates"]] and "confirm_rule" in asked["instructions"]
    assert made["confirmed"] == "PB-06" and made["commit"] != head
    ep = parse_episode_bytes(
        (root / made["path"]).read_bytes(), path=made["path"], episodes_dir=demo_repo.episodes_rel
    )
    assert ep.task == task and "PB-06" in str(ep.get("action"))
    assert "no rule PB-99" in error_text(unknown)
    # Hinted in the tools' words: an agent has no command line to type 'scarwarden recall TASK' at.
    assert "call `recall` with the task" in error_text(unknown)
    assert "PB-01 is not among the rules recall shows" in error_text(unshown)
    assert "call `ask_human_answer`" in error_text(unshown)
    assert "scarwarden " not in error_text(unknown) + error_text(unshown)
    assert git(root, "rev-parse", "HEAD").stdout.strip() == made["commit"]  # nothing more written


def test_verify_citations_checks_against_recall(demo_repo: MemoryRepo) -> None:
    good = "Open with the reader's pain [PB-01, learnt in ep-hkgnqdz88f, ep-vd4adns6h9, ep-72r3dswafq]."
    bad = "Open with the pain [PB-01, learnt in ep-wmjgdnc59j] and [PB-07, learnt in ep-04yqq457qh]."

    async def body(client: Client) -> tuple[Any, ...]:
        return (
            data(await client.call_tool("verify_citations", {"task": LINKEDIN, "text": good})),
            data(await client.call_tool("verify_citations", {"task": LINKEDIN, "text": bad})),
        )

    ok, invented = run_client(demo_repo.root, body)
    assert ok["ok"] is True
    assert ok["cited_rule_ids"] == ["PB-01"]
    assert invented["ok"] is False
    kinds = {(i["rule_id"], i["kind"]) for i in invented["invented"]}
    assert ("PB-01", "episode-not-in-rule") in kinds
    assert ("PB-07", "not-recalled") in kinds


def test_distill_commit_needs_the_flag(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    head = git(root, "rev-parse", "HEAD").stdout

    async def body(client: Client) -> Any:
        return await client.call_tool("distill", {"dry_run": False})

    message = error_text(run_client(root, body))
    assert "--allow-distill-commit" in message
    assert git(root, "rev-parse", "HEAD").stdout == head


def test_distill_dry_run_proposes_and_writes_nothing(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    playbook = (root / "memory/playbook.md").read_bytes()
    head = git(root, "rev-parse", "HEAD").stdout

    async def body(client: Client) -> Any:
        return data(await client.call_tool("distill", {"offline": True}))

    result = run_client(root, body)
    assert result["dry_run"] is True and result["commit"] is None
    # The demo ledger has episodes no rule cites yet: the offline distiller proposes rules.
    assert result["changes"], result
    assert f"+## {result['changes'][0]['rule_id']}: " in result["diff"]
    assert (root / "memory/playbook.md").read_bytes() == playbook
    assert git(root, "rev-parse", "HEAD").stdout == head


def test_distill_dry_run_falls_back_offline_when_the_model_is_unreachable(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the CLI's --dry-run: the preview says the model could not be used and shows
    the offline distiller's proposal; committing would stop with the error instead."""
    root = demo_repo.root
    monkeypatch.setenv("SCARWARDEN_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    monkeypatch.setenv("SCARWARDEN_API_KEY", "sk-test")
    (root / "scarwarden.yaml").write_text("model:\n  backoff: 0.01\n  max_retries: 1\n")
    head = git(root, "rev-parse", "HEAD").stdout

    async def body(client: Client) -> tuple[Any, Any]:
        dry = data(await client.call_tool("distill", {}))
        real = await client.call_tool("distill", {"dry_run": False})
        return dry, real

    dry, real = run_client(root, body, "--allow-distill-commit")
    assert dry["distiller"] == "offline" and "the model could not be used" in dry["notice"]
    assert dry["dry_run"] is True and dry["commit"] is None and dry["changes"]
    assert "127.0.0.1:9" in error_text(real)
    assert git(root, "rev-parse", "HEAD").stdout == head


def test_distill_commits_only_when_the_server_allows_it(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root

    async def body(client: Client) -> Any:
        return data(await client.call_tool("distill", {"dry_run": False, "offline": True}))

    result = run_client(root, body, "--allow-distill-commit")
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    assert result["commit"] == head
    assert git(root, "log", "-1", "--format=%s").stdout.startswith("distill:")
    added = result["changes"][0]["rule_id"]
    assert f"## {added}: " in (root / "memory/playbook.md").read_text(encoding="utf-8")


def test_mcp_outside_a_memory_repo_fails_before_serving(tmp_path: Path, make_cli: Any) -> None:
    result = make_cli(tmp_path)("mcp")
    assert result.exit_code == 2
    assert "error:" in result.stderr and "git" in result.stderr


def test_arguments_match_the_cli_and_errors_are_one_message(demo_repo: MemoryRepo, cli: Any) -> None:
    """Issue 18: tags as one comma-separated string (as --tag takes), the argument names
    of the resource templates, and errors without the SDK's prefix or pydantic's dump."""
    root = demo_repo.root

    async def body(client: Client) -> tuple[Any, ...]:
        made = await client.call_tool(
            "record_episode",
            {"task": "Draft the post", "outcome": "ok", "tags": "linkedin, post", "rules_applied": "PB-01"},
        )
        old_name = await client.call_tool("get_rule", {"id": "PB-01"})
        bad_limit = await client.call_tool("recall", {"task": "x", "limit": 0})
        invalid = await client.call_tool("record_episode", {"task": "x", "outcome": "y", "tags": "Bad Tag"})
        return made, old_name, bad_limit, invalid

    made, old_name, bad_limit, invalid = run_client(root, body)
    episode = data(made)["episode"]
    assert episode["tags"] == ["linkedin", "post"]
    via_cli = json.loads(
        cli("episode", "add", "--task", "t", "--outcome", "o", "--tag", "linkedin, post", "--json").stdout
    )
    assert via_cli["tags"] == episode["tags"]
    for result in (old_name, bad_limit, invalid):
        text = error_text(result)
        assert "Error executing tool" not in text and not text.startswith("error:")
        assert "pydantic" not in text and "validation error" not in text
        assert "hint: " in text
    assert error_text(old_name) == (
        "get_rule: argument 'rule_id' is required; 'id' is not an argument of get_rule.\n"
        "hint: get_rule takes: rule_id"
    )
    assert error_text(bad_limit).startswith(
        "recall: argument 'limit': input should be greater than or equal to 1."
    )
    assert error_text(invalid).startswith("record_episode: invalid episode input; nothing was written")
