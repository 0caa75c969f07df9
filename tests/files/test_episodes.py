"""The episode validator: one function for a stored file's bytes, one for user input.

Every bad input asserts the message content (file, line, field), not just that it failed.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from scarwarden import yamlio
from scarwarden.errors import ValidationError
from scarwarden.files.episode_input import normalise_input, parse_input_documents
from scarwarden.files.episodes import (
    EPISODE_ID_RE,
    FIELD_ORDER,
    MAX_EPISODE_BYTES,
    Episode,
    expected_relpath,
    mint_id,
    parse_episode_bytes,
)

GOOD = """\
id: ep-7k2m9q4x1z
at: 2026-11-03T10:12:00Z
agent: writer
task: Draft a LinkedIn post announcing the beta
action: Opened with a feature list and three emoji; hashtags at the top
outcome: Engagement 40% below the team's average
correction: Open with the reader's pain point and put hashtags at the end
corrected_by: editor
tags: [linkedin, post, hook, hashtags]
source: correction
refs: [ep-2b8d0c1a9f]
rules_applied: [PB-01]
"""
GOOD_PATH = "memory/episodes/2026/11/ep-7k2m9q4x1z.yaml"


def parse(text: str | bytes, path: str | None = GOOD_PATH) -> Episode:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return parse_episode_bytes(raw, path, episodes_dir="memory/episodes")


def problems_of(exc: pytest.ExceptionInfo[ValidationError]) -> list[tuple[object, ...]]:
    return [(p.file, p.line, p.field, p.message) for p in exc.value.problems]


# -- the stored file -------------------------------------------------------------------


def test_spec_example_parses_and_renders_byte_identical() -> None:
    ep = parse(GOOD)
    assert ep.id == "ep-7k2m9q4x1z"
    assert ep.at == "2026-11-03T10:12:00Z"
    assert ep.tags == ["linkedin", "post", "hook", "hashtags"]
    assert ep.get("refs") == ["ep-2b8d0c1a9f"]
    assert list(ep.data) == [k for k in FIELD_ORDER if k in ep.data]
    assert ep.render() == GOOD
    assert ep.relpath("memory/episodes") == GOOD_PATH
    assert json.loads(json.dumps(ep.to_json())) == ep.data


def test_demo_episodes_are_all_canonical(demo_repo) -> None:
    files = sorted(demo_repo.episodes_dir.rglob("*.yaml"))
    assert len(files) >= 16
    for path in files:
        rel = path.relative_to(demo_repo.root).as_posix()
        ep = parse(path.read_bytes(), rel)
        assert ep.render().encode("utf-8") == path.read_bytes(), rel


def test_multiline_text_round_trips() -> None:
    ep = normalise_input(
        {
            "task": "Reply to a ticket",
            "outcome": "line one\nline two\n",
            "x-source-url": "https://example.com/t/1",
        },
        source="t",
        now="2026-11-03T10:12:00Z",
    )
    text = ep.render()
    assert "outcome: |" in text
    again = parse(text, ep.relpath())
    assert again.data == ep.data


def test_malformed_yaml_names_file_and_line() -> None:
    with pytest.raises(ValidationError) as exc:
        parse("id: ep-7k2m9q4x1z\ntask: x\n  outcome: : broken\n")
    assert exc.value.message == f"{GOOD_PATH}: not valid YAML"
    (problem,) = exc.value.problems
    assert problem.file == GOOD_PATH and problem.line == 3
    assert "mapping values are not allowed" in problem.message
    assert f"{GOOD_PATH}:3:" in exc.value.render()


def test_billion_laughs_is_refused_before_expansion() -> None:
    bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for name, prev in zip("bcdefghi", "abcdefgh"):
        bomb += f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]\n"
    bomb += "task: *i\noutcome: boom\n"
    with pytest.raises(ValidationError) as exc:
        parse(bomb)
    assert exc.value.message == f"{GOOD_PATH}: YAML anchors and aliases are not allowed"
    assert exc.value.problems[0].line == 1
    assert "alias bombs" in exc.value.problems[0].message


def test_deep_nesting_is_refused_instead_of_crashing_libyaml() -> None:
    # 25,000 levels (50 KB, under the size cap) segfaults libyaml's composer.
    deep = "task: " + "[" * 25_000 + "]" * 25_000 + "\n"
    assert len(deep) < MAX_EPISODE_BYTES
    with pytest.raises(ValidationError) as exc:
        parse(deep)
    assert "nested more than 64 levels" in exc.value.message
    assert exc.value.problems[0].line == 1
    with pytest.raises(ValidationError):
        yamlio.load("x:\n" + "  - " * 1 + "- " * 3000 + "deep\n")


def test_unknown_key_is_an_error_with_did_you_mean_and_line() -> None:
    text = GOOD.replace("correction:", "corection:")
    with pytest.raises(ValidationError) as exc:
        parse(text)
    assert problems_of(exc) == [(GOOD_PATH, 7, "corection", "unknown key")]
    assert exc.value.problems[0].hint == "did you mean 'correction'?"
    assert f"{GOOD_PATH}:7: field 'corection': unknown key" in exc.value.render()


def test_unknown_key_far_from_any_field_lists_the_known_keys() -> None:
    with pytest.raises(ValidationError) as exc:
        parse(GOOD + "priority: high\n")
    (problem,) = exc.value.problems
    assert (problem.field, problem.line) == ("priority", 13)
    assert problem.hint is not None and "known keys: id, at, agent, task" in problem.hint


def test_extension_keys_are_kept_in_order_after_the_known_ones() -> None:
    ep = parse(GOOD + "x-ticket: 4711\nx-links: [a, b]\n")
    assert list(ep.data)[-2:] == ["x-ticket", "x-links"]
    assert ep.get("x-ticket") == 4711


def test_extension_values_must_be_json_compatible() -> None:
    # A YAML date in an x- key once crashed every index refresh (json.dumps failed).
    with pytest.raises(ValidationError) as exc:
        parse(GOOD + "x-reviewed: 2026-11-03\n")
    assert problems_of(exc) == [
        (GOOD_PATH, 13, "x-reviewed", "extension values must be text, numbers, booleans, lists or mappings")
    ]
    assert parse(GOOD + "x-reviewed: '2026-11-03'\n").get("x-reviewed") == "2026-11-03"


def test_missing_task_names_the_field() -> None:
    with pytest.raises(ValidationError) as exc:
        parse(GOOD.replace("task: Draft a LinkedIn post announcing the beta\n", ""))
    assert problems_of(exc) == [(GOOD_PATH, 1, "task", "missing")]
    assert exc.value.problems[0].hint == "say what the agent was asked to do"


def test_needs_action_outcome_or_correction() -> None:
    text = "id: ep-7k2m9q4x1z\nat: 2026-11-03T10:12:00Z\ntask: Do it\n"
    with pytest.raises(ValidationError) as exc:
        parse(text)
    assert exc.value.problems[0].message == ("an episode needs at least one of action, outcome, correction")


@pytest.mark.parametrize(
    "value, why",
    [
        ("yesterday", "'yesterday' is not a date-time with a time zone"),
        ("2026-11-03", "is not a date-time with a time zone"),  # a bare date has no time
        ("2026-11-03 10:12:00", "is not a date-time with a time zone"),  # no zone
        ("'2026-11-03T10:12:00'", "'2026-11-03T10:12:00' is not a date-time with a time zone"),
        ("2026-11-03T11:12:00+01:00", "is not in canonical UTC form"),
        ("'2026-11-03T10:12:00+00:00'", "is not in canonical UTC form"),
    ],
)
def test_at_must_be_a_canonical_utc_time_in_a_stored_file(value: str, why: str) -> None:
    with pytest.raises(ValidationError) as exc:
        parse(GOOD.replace("at: 2026-11-03T10:12:00Z", f"at: {value}"))
    problems = [p for p in exc.value.problems if p.field == "at"]
    assert len(problems) == 1 and why in problems[0].message
    assert problems[0].line == 2


def test_input_at_with_offset_is_converted_to_utc_and_sharded_by_utc_month() -> None:
    ep = normalise_input({"task": "t", "outcome": "o", "at": "2026-12-01T01:30:00+02:00"}, source="in")
    assert ep.at == "2026-11-30T23:30:00Z"
    assert ep.relpath() == f"memory/episodes/2026/11/{ep.id}.yaml"


def test_tags_not_a_list() -> None:
    with pytest.raises(ValidationError) as exc:
        parse(GOOD.replace("tags: [linkedin, post, hook, hashtags]", "tags: linkedin"))
    assert problems_of(exc) == [(GOOD_PATH, 9, "tags", "must be a list, got str")]


def test_input_tags_are_lower_cased_and_invalid_characters_rejected() -> None:
    ep = normalise_input({"task": "t", "outcome": "o", "tags": ["LinkedIn", " Post ", "post"]}, source="in")
    assert ep.tags == ["linkedin", "post"]
    with pytest.raises(ValidationError) as exc:
        normalise_input(
            {"task": "t", "outcome": "o", "tags": ["Good Tag", "a_b", "ok", "ünï", "-x"]}, source="in"
        )
    assert [p.message for p in exc.value.problems] == [
        "tag 'Good Tag' is not a slug",
        "tag 'a_b' is not a slug",
        "tag 'ünï' is not a slug",
        "tag '-x' is not a slug",
    ]
    assert {p.field for p in exc.value.problems} == {"tags"}


def test_stored_tags_must_already_be_lower_case() -> None:
    with pytest.raises(ValidationError) as exc:
        parse(GOOD.replace("[linkedin,", "[LinkedIn,"))
    assert problems_of(exc) == [(GOOD_PATH, 9, "tags", "tag 'LinkedIn' is not a slug")]


@pytest.mark.parametrize(
    "bad_id",
    [
        "ep-../../etc",
        "ep-ABCDEFGHJK",
        "EP-abcdefgh",
        "ep-a",
        "ep-abc/def",
        "ep-" + "a" * 42,
        "../ep-abcdef",
        "ep-abc\n",
    ],
)
def test_ids_that_could_escape_the_ledger_or_are_not_lower_case(bad_id: str) -> None:
    assert not EPISODE_ID_RE.match(bad_id)
    with pytest.raises(ValidationError) as exc:
        normalise_input({"id": bad_id, "task": "t", "outcome": "o"}, source="in")
    (problem,) = exc.value.problems
    assert problem.field == "id" and problem.message == f"{bad_id!r} is not a valid episode ID"


def test_file_name_must_match_id_and_month() -> None:
    with pytest.raises(ValidationError) as exc:
        parse(GOOD, "memory/episodes/2026/11/ep-other12345.yaml")
    (problem,) = exc.value.problems
    assert problem.field == "id" and problem.line == 1
    assert problem.message == (
        f"file name and folder do not match the episode's id and date (expected {GOOD_PATH})"
    )
    with pytest.raises(ValidationError):
        parse(GOOD, "memory/episodes/2026/10/ep-7k2m9q4x1z.yaml")  # wrong month
    with pytest.raises(ValidationError):
        parse(GOOD, "memory/episodes/ep-7k2m9q4x1z.yaml")  # not sharded
    # Without a path (or without the episodes folder) nothing is compared.
    assert parse(GOOD, None).id == "ep-7k2m9q4x1z"


def test_invalid_utf8_names_the_line() -> None:
    raw = GOOD.encode("utf-8").replace(b"Engagement", b"Engag\xff\xfement")
    with pytest.raises(ValidationError) as exc:
        parse(raw)
    assert exc.value.message == f"{GOOD_PATH}: not valid UTF-8"
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (6, "outcome")
    assert problem.message.startswith("invalid byte 0xff at offset")


def test_oversized_file_is_refused_without_parsing() -> None:
    raw = GOOD.encode() + b"x-pad: " + b"a" * (10 * 1024 * 1024) + b"\n"
    with pytest.raises(ValidationError) as exc:
        parse(raw)
    assert exc.value.message == f"{GOOD_PATH}: episode is {len(raw):,} bytes, over the 64 KiB cap"
    # exactly at the cap is still fine as far as size goes
    padded = GOOD + "x-pad: " + "a" * (MAX_EPISODE_BYTES - len(GOOD) - 8) + "\n"
    assert len(padded.encode()) == MAX_EPISODE_BYTES
    assert parse(padded).id == "ep-7k2m9q4x1z"


@pytest.mark.parametrize("raw", [b"", b"\n\n  \n"])
def test_empty_file(raw: bytes) -> None:
    with pytest.raises(ValidationError) as exc:
        parse(raw)
    assert exc.value.message == f"{GOOD_PATH}: empty episode file"


def test_a_list_is_not_an_episode() -> None:
    with pytest.raises(ValidationError) as exc:
        parse("- task: x\n")
    assert exc.value.problems[0].message == "an episode must be a YAML mapping, got list"


def test_every_problem_is_reported_at_once() -> None:
    text = "id: ep-BAD\nat: soon\ntags: x\ncorection: y\ntask: 42\n"
    with pytest.raises(ValidationError) as exc:
        parse(text)
    fields = [(p.field, p.line) for p in exc.value.problems]
    assert ("corection", 4) in fields and ("id", 1) in fields and ("at", 2) in fields
    assert ("tags", 3) in fields and ("task", 5) in fields
    assert "must be text, got int" in exc.value.render()


# -- input -------------------------------------------------------------------------------


def test_minted_ids_are_random_crockford_and_valid() -> None:
    ids = {mint_id() for _ in range(2000)}
    assert len(ids) == 2000
    for ep_id in ids:
        assert EPISODE_ID_RE.match(ep_id) and len(ep_id) == 13
        assert not set(ep_id[3:]) & set("ilou")


def test_normalise_input_mints_id_and_at() -> None:
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    ep = normalise_input({"task": "t", "correction": "c"}, source="in")
    at = dt.datetime.strptime(ep.at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    assert before <= at <= dt.datetime.now(dt.timezone.utc)
    assert EPISODE_ID_RE.match(ep.id)
    fixed = normalise_input({"task": "t", "correction": "c"}, source="in", now="2026-01-02T03:04:05Z")
    assert fixed.at == "2026-01-02T03:04:05Z"
    assert expected_relpath(fixed.id, fixed.at, "m/e") == f"m/e/2026/01/{fixed.id}.yaml"


def test_input_over_the_size_cap_names_the_biggest_field() -> None:
    with pytest.raises(ValidationError) as exc:
        normalise_input({"task": "t", "outcome": "o" * (10 * 1024 * 1024)}, source="big.yaml")
    (problem,) = exc.value.problems
    assert problem.field == "outcome"
    assert "over the 64 KiB cap ('outcome' alone is 10,485,760 bytes)" in problem.message
    # Just over the cap once rendered (keys and layout count too).
    with pytest.raises(ValidationError, match="over the 64 KiB cap"):
        normalise_input({"task": "t", "outcome": "o" * (MAX_EPISODE_BYTES - 20)}, source="in")
    assert normalise_input({"task": "t", "outcome": "o" * (MAX_EPISODE_BYTES - 100)}, source="in").render()


@pytest.mark.parametrize(
    "raw, count",
    [
        (b"task: a\noutcome: b\n", 1),
        (b"- task: a\n  outcome: b\n- task: c\n  outcome: d\n", 2),
        (b'[{"task": "a", "outcome": "b"}, {"task": "c", "outcome": "d"}]', 2),
        (b'{"task": "a", "outcome": "b"}', 1),
        (b'{"task": "a", "outcome": "b"}\n\n{"task": "c", "outcome": "d"}\n', 2),
        (b"{task: a, outcome: b}", 1),  # flow-style YAML that is not JSON
    ],
)
def test_input_documents_forms(raw: bytes, count: int) -> None:
    docs = parse_input_documents(raw, source="in")
    assert isinstance(docs, list) and len(docs) == count
    assert all(isinstance(d, dict) and d["task"] in "ac" for d in docs)


def test_input_documents_bad_json_line_names_the_line() -> None:
    raw = b'{"task": "a", "outcome": "b"}\n{"task": "c", \n'
    with pytest.raises(ValidationError) as exc:
        parse_input_documents(raw, source="batch.jsonl")
    assert exc.value.message == "batch.jsonl: line 2 is not valid JSON"
    assert exc.value.problems[0].line == 2


def test_input_documents_refuse_bombs_and_bad_bytes() -> None:
    with pytest.raises(ValidationError, match="anchors and aliases"):
        parse_input_documents(b"a: &x [1]\nb: *x\n", source="in")
    with pytest.raises(ValidationError, match="not valid UTF-8"):
        parse_input_documents(b"task: \xff\n", source="in")
    with pytest.raises(ValidationError, match="no episode in the input"):
        parse_input_documents(b"  \n", source="in")
    deep_json = b'{"task": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    with pytest.raises(ValidationError, match="nested more than 64 levels"):
        parse_input_documents(deep_json, source="in")


def test_input_documents_know_where_each_item_is() -> None:
    docs = parse_input_documents(b"- task: a\n  outcome: b\n- task: c\n  corection: d\n", source="in")
    assert docs.where(1) == (3, {"task": 3, "corection": 4})  # type: ignore[attr-defined]
    jl = parse_input_documents(b'\n{"task": "a"}\n{"task": "b"}\n', source="in")
    assert jl.where(1) == (3, {})  # type: ignore[attr-defined]


def test_yamlio_loader_is_safe() -> None:
    with pytest.raises(ValidationError):
        yamlio.load("!!python/object/apply:os.system ['echo hi']\n")
    assert yamlio.load("a: 1\n") == {"a": 1}


def test_generated_text_survives_render_and_parse() -> None:
    # Property-style: whatever text an agent records comes back identical. (NEL, U+2028
    # and U+2029 were once written raw and read back as line breaks.)
    import random
    import string

    from scarwarden.files.input_policy import text_problem

    rng = random.Random(7)
    alphabet = (
        string.printable
        + "äö€漢字\u2028\u2029\u0085\ufeff\x00\x07\u200b\x1b🎉"
        + " \t\n\r:#-'\"&*!|>%@`{}[],?"
    )
    checked = refused = 0
    for _ in range(1500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        if not text.strip():
            continue
        data = {"task": text, "outcome": "o" + text, "tags": ["a"], "x-note": [text, {"k": text}]}
        if text_problem(text) is not None:
            # NUL, controls other than tab/newline, C1 (NEL): refused, never stored (issue 16).
            with pytest.raises(ValidationError, match="field 'task': holds"):
                normalise_input(data, source="gen", now="2026-01-01T00:00:00Z")
            refused += 1
            continue
        ep = normalise_input(data, source="gen", now="2026-01-01T00:00:00Z")
        back = parse(ep.render().encode("utf-8"), ep.relpath())
        assert back.data == ep.data, repr(text)
        checked += 1
    assert checked > 300 and refused > 300
