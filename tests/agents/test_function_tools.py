"""Plain function tools: one definition shared with the MCP server's tools, JSON schemas
for OpenAI-compatible function calling, and an agent loop against the fake server that
recalls, acts, records with its receipt, and the gate proves the receipt."""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any

import anyio
import pytest
from fakellm import FakeLLM

from scarwarden.agents import tool_specs as spec
from scarwarden.agents.functions import MemoryFunctions, check_arguments
from scarwarden.agents.tool_loop import run
from scarwarden.api import Memory
from scarwarden.errors import ModelError
from scarwarden.files.episode_fields import SOURCES
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"


def test_docstrings_are_the_descriptions_and_schemas_follow_the_signatures(demo_repo: MemoryRepo) -> None:
    tools = MemoryFunctions(Memory(demo_repo))
    for function, tool in zip(tools.functions(), spec.TOOLS, strict=True):
        assert function.__name__ == tool.name
        assert inspect.getdoc(function) == tool.description
        params = list(inspect.signature(function).parameters.values())
        assert [p.name for p in params] == [p.name for p in tool.params]
        assert [p.name for p in params if p.default is inspect.Parameter.empty] == [
            p.name for p in tool.params if p.required
        ]
    schemas = tools.schemas()
    assert [s["function"]["name"] for s in schemas] == ["recall", "record_episode", "ask_human_answer"]
    recall = schemas[0]["function"]
    assert recall["parameters"]["required"] == ["task"]
    assert recall["parameters"]["additionalProperties"] is False
    assert recall["parameters"]["properties"]["limit"] == {
        "anyOf": [{"type": "integer", "minimum": 1, "maximum": 100}, {"type": "null"}],
        "description": "At most this many rules (default: the repository's recall.limit setting).",
    }
    json.dumps(schemas)  # plain JSON


def test_one_definition_with_the_mcp_server(demo_repo: MemoryRepo) -> None:
    """The MCP tools' descriptions, argument names, descriptions, required arguments and
    argument rules are the shared definition's: probed values are accepted and refused alike."""
    pytest.importorskip("mcp")
    from pydantic import ValidationError as PydanticError

    from scarwarden.agents.mcp import args
    from scarwarden.agents.mcp.server import build_server

    server = build_server(demo_repo)
    listed = {tool.name: tool for tool in anyio.run(server.list_tools)}
    for tool in spec.TOOLS:
        mcp_tool = listed[tool.name]
        assert mcp_tool.description == tool.description
        props = mcp_tool.input_schema["properties"]
        assert list(props) == [p.name for p in tool.params]
        assert {k: v["description"] for k, v in props.items()} == {p.name: p.description for p in tool.params}
        assert set(mcp_tool.input_schema.get("required", [])) == {p.name for p in tool.params if p.required}
        model = server._tool_manager.get_tool(tool.name).fn_metadata.arg_model
        base = {p.name: "x" for p in tool.params if p.required}
        probes: list[dict[str, Any]] = [
            {},
            base,
            {**base, "limit": 0},
            {**base, "limit": 1},
            {**base, "limit": 100},
            {**base, "limit": 101},
            {**base, "limit": "3"},
            {**base, "tags": ["a", "b"]},
            {**base, "tags": "a,b"},
            {**base, "tags": [1]},
            {**base, "source": "correction"},
            {**base, "source": "guess"},
            {**base, "receipt": {"receipt": "x"}},
            {**base, "receipt": 5},
            {**base, "answer": None},
            {**base, "bogus": 1},
        ]
        for probe in probes:
            if any(key not in props and key != "bogus" for key in probe):
                continue
            try:
                model.model_validate(probe, strict=True)
                mcp_ok = True
            except PydanticError:
                mcp_ok = False
            assert (not check_arguments(tool, probe)) == mcp_ok, (tool.name, probe)
    assert typing.get_args(typing.get_args(typing.get_args(args.Source)[0])[0]) == SOURCES
    assert spec.SOURCE.schema["anyOf"][0]["enum"] == list(SOURCES)


def test_call_answers_errors_for_the_model_to_read(demo_repo: MemoryRepo) -> None:
    tools = MemoryFunctions(Memory(demo_repo))
    assert tools.call("recall", '{"task": "x", "limit": 0}')["exit_code"] == 2
    assert "unknown argument 'id'" in tools.call("record_episode", {"task": "x", "id": "ep-abc"})["error"]
    assert tools.call("recall", "{not json")["error"].startswith("the arguments are not valid JSON")
    assert "the tools are recall, record_episode, ask_human_answer" in tools.call("forget", "{}")["error"]
    bad = tools.call("record_episode", {"task": "x", "tags": ["Not A Slug"]})
    assert bad["exit_code"] == 1 and "tags" in bad["error"]


def _scripted_model(body: dict[str, Any]) -> dict[str, Any]:
    """A model that recalls, acts (its own tool), records with the receipt, replies."""
    messages = body["messages"]
    assert [t["function"]["name"] for t in body["tools"]][:3] == [
        "recall",
        "record_episode",
        "ask_human_answer",
    ]
    done = [m for m in messages if m["role"] == "tool"]

    def calls(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        call = {
            "id": f"call-{len(done)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}

    if len(done) == 0:
        return calls("recall", {"task": TASK})
    if len(done) == 1:
        recalled = json.loads(done[0]["content"])
        assert recalled["verdict"] == "ACT"
        return calls(
            "post_message",
            {"text": f"Sale this week; codes go to the mailing list {recalled['cite_as']['PB-02']}"},
        )
    if len(done) == 2:
        recalled = json.loads(done[0]["content"])
        return calls(
            "record_episode",
            {
                "task": TASK,
                "action": "Posted the sale without the code; the code goes to the mailing list",
                "outcome": "Posted",
                "rules_applied": "PB-02",
                "receipt": recalled["receipt"],
                "agent": "loop-test",
            },
        )
    message = {"role": "assistant", "content": "Done: posted without the code, as PB-02 says."}
    return {"choices": [{"index": 0, "finish_reason": "stop", "message": message}]}


def test_an_agent_loop_recalls_acts_records_and_the_gate_proves_the_receipt(demo_repo: MemoryRepo) -> None:
    posted: list[str] = []
    post_schema = {
        "type": "function",
        "function": {
            "name": "post_message",
            "description": "Post a message on the company's Twitter account.",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
    }
    memory = Memory(demo_repo)
    proved_before = verify(demo_repo).receipts
    with FakeLLM(default=_scripted_model) as llm:
        result = run(
            memory,
            TASK,
            base_url=llm.url,
            api_key="test-key",
            model="fake-model",
            actions={"post_message": (post_schema, lambda text: posted.append(text) or {"posted": True})},
        )
        assert len(llm.requests) == 4
        assert llm.requests[0]["body"]["messages"][0]["content"].startswith("This server is Scarwarden")
    assert result.reply == "Done: posted without the code, as PB-02 says."
    assert [name for name, _, _ in result.calls] == ["recall", "post_message", "record_episode"]
    assert posted and "[PB-02, learnt in" in posted[0]
    recorded = result.calls[2][2]
    assert "error" not in recorded, recorded
    assert recorded["commit"] and recorded["episode"]["rules_applied"] == ["PB-02"]
    receipt = result.calls[0][2]["receipt"]
    assert recorded["episode"]["recalled"] == receipt
    # The gate re-derives the receipt from git: the agent was given PB-02.
    report = verify(demo_repo)
    assert report.ok, [str(p) for p in report.problems]
    assert report.receipts == proved_before + 1
    assert not [w for w in report.warnings if "receipt" in str(w)]
    assert memory.episode(recorded["id"]).get("recalled")["rules"] == ["PB-02"]


def test_the_agent_loop_sends_no_credential_and_quotes_no_key(demo_repo: MemoryRepo) -> None:
    """The loop posts with ``requests`` itself, past the model client's screen: a key typed
    into the task reached the server as typed, and an error that echoed the API key was
    quoted whole. Now every request is screened as the client's are (the loop's own
    messages keep the text), and the key is never quoted."""
    from fake_secrets import ALNUM, draw

    token = "gh" + "p_" + draw(ALNUM, 36)
    task = f"Post the launch note; the deploy token is {token}"
    with FakeLLM(default="Done.") as llm:
        result = run(Memory(demo_repo), task, base_url=llm.url, api_key="k", model="fake-model")
        sent = json.dumps(llm.bodies())
    assert result.reply == "Done." and token in result.messages[1]["content"]
    assert token not in sent and "[redacted github-token]" in sent
    key = "sk-loop-" + draw(ALNUM, 24)
    with FakeLLM().script((401, f"invalid key {key} for this account")) as llm:
        with pytest.raises(ModelError) as refused:
            run(Memory(demo_repo), "Post the note", base_url=llm.url, api_key=key, model="fake-model")
    assert "HTTP 401" in str(refused.value) and key not in str(refused.value)


def test_the_agent_loop_never_quotes_a_password_in_the_base_url(demo_repo: MemoryRepo) -> None:
    """requests' own error text quotes the URL ("No connection adapters were found for
    'bob:s3cret@...'"): the loop's error quoted it whole; now as ``bob:***@``."""
    from scarwarden.errors import ModelUnreachable

    with pytest.raises(ModelUnreachable) as info:
        url = "bob:s3cretPW@localhost:9/v1"
        run(Memory(demo_repo), "Post the note", base_url=url, api_key="k", model="m")
    assert "s3cretPW" not in str(info.value) and "bob:***@localhost:9/v1" in str(info.value)
