"""Writes the corpus of bad inputs (tests/hardening/corpus/) and what each must produce.

Run ``python tests/hardening/make_corpus.py`` after changing a case; the files are
committed, so a reader sees each input byte for byte. Three groups:

* ``episode/``: episode input for ``episode add --file`` and stdin; cases that parse to
  one JSON-able mapping also go to MCP ``record_episode``, and cases whose bad value is
  in ``task`` to the web UI's answer form;
* ``stored/``: files found on disk, planted in the ledger (at ``place``, or as a
  symlink) for the pre-commit gate (``check``) and the index (``episode list``);
* ``playbook/``: broken ``memory/playbook.md`` files for ``rule list`` and ``check --all``.

``EXPECTED.json`` in each folder maps a file to the message its refusal must contain
and the exit code.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "corpus"
OK = b"task: Ship the beta post\noutcome: it went out\n"
EP = "ep-corpus0001"
AT = "2026-11-20T10:00:00Z"


def stored(body: str = "", *, ep_id: str = EP, at: str = AT) -> bytes:
    return f"id: {ep_id}\nat: {at}\ntask: Write the invite\noutcome: sent\n{body}".encode()


def j(obj: object) -> bytes:
    return json.dumps(obj).encode()


def with_task(value: object, **extra: object) -> bytes:
    return json.dumps({"task": value, "outcome": "o", **extra}).encode()


SURROGATE = b'{"task": "a\\ud800b", "outcome": "o"}'

# name -> (bytes, message, exit code, doors beyond the CLI: "mcp", "web" or "web=<its own message>")
EPISODE: dict[str, tuple[bytes, str, int, tuple[str, ...]]] = {
    # -- the issue's own findings
    "surrogate.json": (SURROGATE, "field 'task': holds a lone surrogate (U+D800)", 1, ("mcp", "web")),
    "surrogate_low.json": (b'{"task": "ok", "outcome": "\\udfff"}', "lone surrogate (U+DFFF)", 1, ("mcp",)),
    "nul_in_batch.json": (
        b'[{"task": "a\\u0000b", "outcome": "o"}, {"task": "x", "outcome": "o"}]',
        "holds a NUL character (U+0000) at character 2; only tab and newline are allowed (item 1)",
        1,
        (),
    ),
    "nul_task.json": (
        with_task("a\x00b"),
        "field 'task': holds a NUL character",
        1,
        ("mcp", "web=the task: holds a NUL character"),
    ),
    "dup_key.yaml": (
        b"task: first\ntask: second\noutcome: o\n",
        ":2: duplicate key 'task' (first on line 1)",
        1,
        (),
    ),
    "dup_key_nested.yaml": (OK + b"x-meta: {a: 1, a: 2}\n", "duplicate key 'a'", 1, ()),
    "dup_key_quoted.yaml": (b'task: a\n"task": b\noutcome: o\n', "duplicate key 'task'", 1, ()),
    "dup_key.json": (b'{"task": "a", "task": "b", "outcome": "o"}', "duplicate key 'task'", 1, ()),
    "dup_key_line2.jsonl": (
        b'{"task": "a", "outcome": "o"}\n{"task": "a", "outcome": "o", "outcome": "p"}\n',
        ":2: duplicate key 'outcome'",
        1,
        (),
    ),
    "merge_key.yaml": (b"<<: {task: t}\noutcome: o\n", ":1: merge keys ('<<') are not allowed", 1, ()),
    "merge_key_list.yaml": (
        OK + b"x-m:\n  <<: [{a: 1}, {b: 2}]\n",
        "merge keys ('<<') are not allowed",
        1,
        (),
    ),
    # -- numbers that are not JSON (NaN and infinity: SQLite refuses the index's document)
    "nan.yaml": (OK + b"x-score: .nan\n", "field 'x-score': nan is not a finite number", 1, ()),
    "inf_in_list.yaml": (OK + b"x-scores: [1, -.inf]\n", "'x-scores': [1]: -inf is not a finite", 1, ()),
    "inf_nested.yaml": (OK + b"x-m: {w: {v: .Inf}}\n", "field 'x-m': w.v: inf is not a finite", 1, ()),
    "overflow_to_inf.json": (
        b'{"task": "t", "outcome": "o", "x-n": 1e999}',
        "field 'x-n': inf is not a finite number",
        1,
        ("mcp",),
    ),
    # -- tags and anchors
    "tag_str.yaml": (b"task: !!str t\noutcome: o\n", "YAML tags are not allowed", 1, ()),
    "tag_python.yaml": (
        b"task: !!python/object/apply:os.system ['echo pwned']\noutcome: o\n",
        "tags are not allowed",
        1,
        (),
    ),
    "tag_binary.yaml": (OK + b"x-b: !!binary aGVsbG8=\n", "YAML tags are not allowed", 1, ()),
    "tag_local.yaml": (b"task: !secret t\noutcome: o\n", "the tag '!secret' is refused", 1, ()),
    "tag_set.yaml": (OK + b"x-s: !!set {a, b}\n", "YAML tags are not allowed", 1, ()),
    "tag_timestamp.yaml": (
        OK + b"at: !!timestamp 2026-11-20T10:00:00Z\n",
        "YAML tags are not allowed",
        1,
        (),
    ),
    "tag_on_mapping.yaml": (b"!!map\ntask: t\noutcome: o\n", "YAML tags are not allowed", 1, ()),
    "tag_directive.yaml": (
        b"%TAG !e! tag:example.com,2000:\n---\ntask: !e!x t\noutcome: o\n",
        "tags are not allowed",
        1,
        (),
    ),
    "anchor_alias.yaml": (b"task: &t Ship\noutcome: *t\n", "YAML anchors and aliases are not allowed", 1, ()),
    "merge_via_alias.yaml": (b"x-base: &b {task: t}\n<<: *b\noutcome: o\n", "anchors and aliases", 1, ()),
    "bomb_billion_laughs.yaml": (
        b"a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + b"".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n".encode() for p, c in zip("abcdefgh", "bcdefghi")
        )
        + b"task: *i\n",
        "anchors/aliases (&name, *name) are refused, to rule out alias bombs",
        1,
        (),
    ),
    "bomb_quadratic.yaml": (
        b"x-a: &a " + b"x" * 20000 + b"\n" + b"x-l: [" + b"*a, " * 2000 + b"*a]\n" + OK,
        "anchors",
        1,
        (),
    ),
    # -- nesting, size
    "deep_flow.yaml": (
        b"task: t\noutcome: o\nx-a: " + b"[" * 30_000 + b"\n",
        "nested more than 64 levels deep",
        1,
        (),
    ),
    "deep_block.yaml": (
        OK + b"x-a:\n" + b"".join(b"  " * i + b"k:\n" for i in range(1, 80)) + b"  " * 80 + b"v\n",
        "field 'x-a': nested more than 9 levels deep",
        1,
        (),
    ),
    "deep_json.json": (
        b'{"task": "t", "outcome": "o", "x-a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "nested more than 64 levels deep",
        1,
        (),
    ),
    "deep_jsonl.jsonl": (
        b'{"task": "t", "outcome": "o"}\n{"x": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",
        "line 2 is not valid JSON",
        1,
        (),
    ),
    "huge_task.yaml": (
        b"task: " + b"x" * 100_000 + b"\noutcome: o\n",
        "over the 64 KiB cap ('task' alone is 100,000 bytes)",
        1,
        ("mcp", "web=The form's 'task' is 100,000 characters; this form takes at most 20,000"),
    ),
    "huge_item_in_batch.jsonl": (
        b'{"task": "a", "outcome": "o"}\n' + with_task("b", correction="y" * 70_000) + b"\n",
        "('correction' alone is 70,000 bytes) (item 2)",
        1,
        (),
    ),
    "huge_key.yaml": (OK + b"x-" + b"k" * 70_000 + b": 1\n", ":3: could not find expected ':'", 1, ()),
    "many_keys.yaml": (
        OK + b"".join(b"x-k%d: %d\n" % (i, i) for i in range(8000)),
        "over the 64 KiB cap",
        1,
        (),
    ),
    "huge_tag_list.json": (
        with_task("t", tags=[f"t{i}" for i in range(12000)]),
        "over the 64 KiB cap",
        1,
        ("mcp",),
    ),
    "long_line_no_newline.yaml": (b"outcome: o\ntask: " + b"y" * 70_000, "over the 64 KiB cap", 1, ()),
    # -- encodings
    "latin1.yaml": (b"task: caf\xe9\noutcome: o\n", "not valid UTF-8", 1, ()),
    "invalid_byte_ff.yaml": (b"task: t\noutcome: \xff\n", ":2: field 'outcome': invalid byte 0xff", 1, ()),
    "overlong_utf8.yaml": (b"task: a\xc0\xafb\noutcome: o\n", "invalid byte 0xc0", 1, ()),
    "cesu_surrogate.yaml": (b"task: a\xed\xa0\x80b\noutcome: o\n", "not valid UTF-8", 1, ()),
    "truncated_utf8.yaml": (b"task: t\noutcome: caf\xc3", "not valid UTF-8", 1, ()),
    "utf16le_bom.yaml": ("task: t\noutcome: o\n".encode("utf-16"), "not valid UTF-8", 1, ()),
    "utf32_bom.json": ('{"task": "t", "outcome": "o"}'.encode("utf-32"), "not valid UTF-8", 1, ()),
    "bom_then_nul.json": (b"\xef\xbb\xbf" + with_task("a\x00"), "holds a NUL character", 1, ()),
    "crlf_dup_key.yaml": (b"task: a\r\ntask: b\r\noutcome: o\r\n", ":2: duplicate key 'task'", 1, ()),
    "crlf_cr_in_value.yaml": (b'task: "a\\rb"\r\noutcome: o\r\n', "holds a carriage return (U+000D)", 1, ()),
    "cr_in_json.json": (
        with_task("line\r\nbreak"),
        "holds a carriage return (U+000D) at character 5",
        1,
        ("mcp",),
    ),
    # -- control characters
    "esc.json": (
        with_task("\x1b[31mred"),
        "holds an escape character (U+001B) at character 1",
        1,
        ("mcp", "web"),
    ),
    "bel_yaml_escape.yaml": (b'task: "ring\\a"\noutcome: o\n', "control character (U+0007)", 1, ()),
    "del.json": (with_task("del\x7f"), "control character (U+007F)", 1, ("mcp", "web")),
    "c1_nel.json": (with_task("next\x85line"), "control character (U+0085)", 1, ("mcp", "web")),
    "c1_csi.json": (with_task("x\x9by"), "control character (U+009B)", 1, ("mcp", "web")),
    "vertical_tab.json": (with_task("a\x0bb"), "control character (U+000B)", 1, ("mcp", "web")),
    "form_feed.json": (with_task("a\x0cb"), "control character (U+000C)", 1, ("mcp", "web")),
    "backspace_in_outcome.json": (
        j({"task": "t", "outcome": "o\x08"}),
        "field 'outcome': holds a control",
        1,
        ("mcp",),
    ),
    "nul_in_correction.yaml": (b'task: t\ncorrection: "fix\\0"\n', "field 'correction': holds a NUL", 1, ()),
    "nul_in_agent.json": (with_task("t", agent="bot\x00"), "field 'agent': holds a NUL", 1, ("mcp",)),
    "nul_in_tag.json": (with_task("t", tags=["ok", "a\x00"]), "tag 'a\\x00' is not a slug", 1, ("mcp",)),
    "nul_in_key.json": (j({"task": "t", "outcome": "o", "x-\x00": 1}), "the key holds a NUL", 1, ()),
    "control_in_extension.json": (
        with_task("t", **{"x-note": {"k": ["\x07"]}}),
        "field 'x-note': 'k'[0]: holds a control",
        1,
        (),
    ),
    "control_in_extension_key.json": (
        with_task("t", **{"x-note": {"k\x1b": 1}}),
        "the key holds an escape character",
        1,
        (),
    ),
    "nul_in_ref.json": (with_task("t", refs=["ep-abc\x00"]), "is not an episode ID", 1, ("mcp",)),
    # -- wrong types, every field
    "task_int.yaml": (b"task: 42\noutcome: o\n", "field 'task': must be text, got int", 1, ("mcp",)),
    "task_bool.yaml": (b"task: yes\noutcome: o\n", "field 'task': must be text, got bool", 1, ()),
    "task_float.yaml": (b"task: 1.5\noutcome: o\n", "must be text, got float", 1, ()),
    "task_date.yaml": (b"task: 2026-11-20\noutcome: o\n", "must be text, got date", 1, ()),
    "task_list.json": (with_task(["a", "b"]), "field 'task': must be text, got list", 1, ("mcp",)),
    "task_mapping.json": (with_task({"a": 1}), "field 'task': must be text, got dict", 1, ("mcp",)),
    "task_null.yaml": (b"task: null\noutcome: o\n", "field 'task': missing", 1, ()),
    "action_int.json": (j({"task": "t", "action": 3}), "field 'action': must be text, got int", 1, ("mcp",)),
    "outcome_list.json": (
        j({"task": "t", "outcome": ["o"]}),
        "field 'outcome': must be text, got list",
        1,
        ("mcp",),
    ),
    "correction_mapping.json": (
        j({"task": "t", "correction": {"a": 1}}),
        "field 'correction': must be text, got dict",
        1,
        ("mcp",),
    ),
    "corrected_by_bool.json": (
        with_task("t", corrected_by=True),
        "field 'corrected_by': must be text, got bool",
        1,
        ("mcp",),
    ),
    "agent_int.json": (with_task("t", agent=7), "field 'agent': must be text, got int", 1, ("mcp",)),
    "tags_string.json": (with_task("t", tags="a,b"), "field 'tags': must be a list, got str", 1, ()),
    "tags_mapping.json": (
        with_task("t", tags={"a": 1}),
        "field 'tags': must be a list, got dict",
        1,
        ("mcp",),
    ),
    "tags_ints.json": (with_task("t", tags=[1, 2]), "field 'tags': item 1 must be text", 1, ("mcp",)),
    "tags_not_slug.json": (
        with_task("t", tags=["Social Media"]),
        "tag 'Social Media' is not a slug",
        1,
        ("mcp",),
    ),
    "refs_string.json": (with_task("t", refs="ep-abc"), "field 'refs': must be a list, got str", 1, ()),
    "refs_ints.json": (with_task("t", refs=[1]), "field 'refs': item 1 must be text", 1, ("mcp",)),
    "rules_applied_int.json": (
        with_task("t", rules_applied=3),
        "field 'rules_applied': must be a list, got int",
        1,
        ("mcp",),
    ),
    "rules_applied_bad.json": (with_task("t", rules_applied=["PB-1/../x"]), "is not a rule ID", 1, ("mcp",)),
    "source_int.json": (with_task("t", source=1), "field 'source': 1 is not a known source", 1, ()),
    "source_unknown.json": (with_task("t", source="rumour"), "'rumour' is not a known source", 1, ()),
    "at_int.json": (with_task("t", at=1700000000), "field 'at': 1700000000 is not a date-time", 1, ()),
    "at_bool.yaml": (OK + b"at: true\n", "field 'at': True is not a date-time", 1, ()),
    "at_list.json": (
        with_task("t", at=["2026-11-20T10:00:00Z"]),
        "is not a date-time with a time zone",
        1,
        (),
    ),
    "at_date_only.yaml": (OK + b"at: 2026-11-20\n", "is not a date-time with a time zone", 1, ()),
    "at_naive.json": (with_task("t", at="2026-11-20T10:00:00"), "is not a date-time with a time zone", 1, ()),
    "at_overflow_late.json": (with_task("t", at="9999-12-31T23:00:00-05:00"), "is out of range", 1, ()),
    "at_overflow_early.json": (with_task("t", at="0001-01-01T00:00:00+01:00"), "is out of range", 1, ()),
    "at_overflow_yaml.yaml": (OK + b"at: 9999-12-31T23:00:00-05:00\n", "is out of range", 1, ()),
    "at_month_13.yaml": (
        OK + b"at: 2026-13-45T00:00:00Z\n",
        ":3: '2026-13-45T00:00:00Z' is not a real date or time",
        1,
        (),
    ),
    "at_feb_30.json": (
        with_task("t", at="2026-02-30T10:00:00Z"),
        "is not a real date or time (day is out of range for month)",
        1,
        (),
    ),
    "at_words.json": (with_task("t", at="yesterday"), "'yesterday' is not a date-time", 1, ()),
    "x_date.yaml": (OK + b"x-reviewed: 2026-11-03\n", "extension values must be text, numbers", 1, ()),
    # -- empty and missing
    "task_empty.json": (with_task(""), "field 'task': must not be empty", 1, ("web=the task is empty",)),
    "task_blank.json": (with_task("   \n\t"), "field 'task': must not be empty", 1, ()),
    "no_task.json": (j({"outcome": "o"}), "field 'task': missing", 1, ("mcp",)),
    "no_content.json": (
        j({"task": "t"}),
        "an episode needs at least one of action, outcome, correction",
        1,
        ("mcp",),
    ),
    "blank_content.json": (j({"task": "t", "outcome": "  "}), "field 'outcome': must not be empty", 1, ()),
    "unknown_key_typo.yaml": (b"task: t\ncorection: c\n", "field 'corection': unknown key", 1, ("mcp",)),
    "unknown_key.json": (with_task("t", colour="red"), "field 'colour': unknown key", 1, ("mcp",)),
    "key_int.yaml": (OK + b"3: three\n", "keys must be strings", 1, ()),
    # -- not a mapping
    "list_of_ints.json": (b"[1, 2]", "an episode must be a YAML mapping, got int", 1, ()),
    "scalar.yaml": (b"hello\n", "an episode must be a YAML mapping, got str", 1, ()),
    "null.yaml": (b"null\n", "an episode must be a YAML mapping, got NoneType", 1, ()),
    "empty.yaml": (b"", "no episode in the input", 1, ()),
    "whitespace.yaml": (b"  \n\t\n", "no episode in the input", 1, ()),
    "empty_list.json": (b"[]", "no episode in the input", 1, ()),
    "two_documents.yaml": (OK + b"---\n" + OK, "not valid YAML", 1, ()),
    "yaml_version_9.yaml": (b"%YAML 9.9\n---\n" + OK, "not valid YAML", 1, ()),
    # -- IDs: path separators, traversal
    "id_traversal.json": (with_task("t", id="ep-../../etc/passwd"), "is not a valid episode ID", 1, ()),
    "id_slash.json": (with_task("t", id="ep-abc/def"), "is not a valid episode ID", 1, ()),
    "id_dotdot_prefix.json": (with_task("t", id="../ep-abcdef"), "is not a valid episode ID", 1, ()),
    "id_backslash.json": (with_task("t", id="ep-abc\\def"), "is not a valid episode ID", 1, ()),
    "id_upper.json": (with_task("t", id="ep-ABCDEF"), "is not a valid episode ID", 1, ()),
    "id_newline.json": (with_task("t", id="ep-abcdef\n"), "is not a valid episode ID", 1, ()),
    "id_nul.json": (with_task("t", id="ep-abc\x00def"), "is not a valid episode ID", 1, ()),
    "id_too_long.json": (with_task("t", id="ep-" + "a" * 50), "is not a valid episode ID", 1, ()),
    "id_yaml_suffix.json": (with_task("t", id="ep-abcdef.yaml"), "is not a valid episode ID", 1, ()),
    "id_int.json": (with_task("t", id=12345), "12345 is not a valid episode ID", 1, ()),
    "ref_traversal.json": (
        with_task("t", refs=["../../etc/passwd"]),
        "'../../etc/passwd' is not an episode ID",
        1,
        ("mcp",),
    ),
    "batch_same_id.jsonl": (
        with_task("a", id="ep-samesame01") + b"\n" + with_task("b", id="ep-samesame01") + b"\n",
        "episode ID ep-samesame01 appears twice in the input (item 2)",
        1,
        (),
    ),
    # -- YAML syntax
    "unclosed_quote.yaml": (b'task: "open\noutcome: o\n', "not valid YAML", 1, ()),
    "tab_indent.yaml": (b"task: t\noutcome:\n\t- o\n", "not valid YAML", 1, ()),
    "bad_indent.yaml": (b"task: t\n  outcome: o\n", "not valid YAML", 1, ()),
    "unhashable_key.yaml": (OK + b"? [a, b]\n: c\n", "found unhashable key", 1, ()),
    "flow_unhashable.yaml": (OK + b"x-a: {[1]: 2}\n", "found unhashable key", 1, ()),
    "json_trailing_garbage.json": (b'{"task": "t", "outcome": "o"} trailing', "not valid YAML", 1, ()),
    "json_nan.json": (b'{"task": "t", "outcome": "o", "x-n": NaN}', "NaN is not a JSON value", 1, ()),
    "json_infinity.jsonl": (
        b'{"task": "t", "outcome": "o"}\n{"task": "t", "outcome": "o", "x-n": -Infinity}\n',
        ":2: -Infinity is not a JSON value",
        1,
        (),
    ),
    "jsonl_bad_line.jsonl": (
        b'{"task": "t", "outcome": "o"}\n{"task": \n',
        "line 2 is not valid JSON",
        1,
        (),
    ),
}

# name -> (bytes or None for a symlink, path in the repo, message); symlinks point at ``target``.
STORED: dict[str, tuple[bytes | None, str, str]] = {
    "misplaced_month.yaml": (
        stored(),
        f"memory/episodes/2026/01/{EP}.yaml",
        "file name and folder do not match",
    ),
    "misplaced_year.yaml": (
        stored(),
        f"memory/episodes/2025/11/{EP}.yaml",
        "file name and folder do not match",
    ),
    "wrong_name.yaml": (
        stored(),
        "memory/episodes/2026/11/ep-othername1.yaml",
        "file name and folder do not match",
    ),
    "not_sharded.yaml": (stored(), f"memory/episodes/{EP}.yaml", "file name and folder do not match"),
    "symlink_to_playbook": (None, f"memory/episodes/2026/11/{EP}.yaml", "a symlink in the episodes folder"),
    "symlink_outside": (
        None,
        "memory/episodes/2026/11/ep-linkout001.yaml",
        "a symlink in the episodes folder",
    ),
    "stored_nul.yaml": (stored('correction: "a\\0b"\n'), f"memory/episodes/2026/11/{EP}.yaml", "holds a NUL"),
    "stored_nan.yaml": (stored("x-f: .nan\n"), f"memory/episodes/2026/11/{EP}.yaml", "nan is not a finite"),
    "stored_control.yaml": (
        stored('agent: "\\e[1m"\n'),
        f"memory/episodes/2026/11/{EP}.yaml",
        "escape character",
    ),
    "stored_dup_key.yaml": (
        stored("task: again\n"),
        f"memory/episodes/2026/11/{EP}.yaml",
        "duplicate key 'task'",
    ),
    "stored_tag.yaml": (
        stored("agent: !!str bot\n"),
        f"memory/episodes/2026/11/{EP}.yaml",
        ":5: the tag 'tag:yaml.org,2002:str' is refused",
    ),
    "stored_anchor.yaml": (
        stored("agent: &a bot\ncorrected_by: *a\n"),
        f"memory/episodes/2026/11/{EP}.yaml",
        "anchors",
    ),
    "stored_not_canonical_at.yaml": (
        stored(at="2026-11-20T11:00:00+01:00"),
        f"memory/episodes/2026/11/{EP}.yaml",
        "is not in canonical UTC form",
    ),
    "stored_too_big.yaml": (
        stored("correction: " + "x" * 70_000 + "\n"),
        f"memory/episodes/2026/11/{EP}.yaml",
        "too large",
    ),
    "stored_latin1.yaml": (
        stored() + b"agent: caf\xe9\n",
        f"memory/episodes/2026/11/{EP}.yaml",
        "invalid byte 0xe9",
    ),
    "stored_empty.yaml": (b"", f"memory/episodes/2026/11/{EP}.yaml", "the file is empty"),
    "stored_list.yaml": (b"- a\n- b\n", f"memory/episodes/2026/11/{EP}.yaml", "must be a YAML mapping"),
    "stored_no_id.yaml": (
        b"at: 2026-11-20T10:00:00Z\ntask: t\noutcome: o\n",
        f"memory/episodes/2026/11/{EP}.yaml",
        "field 'id': missing",
    ),
    "stored_bad_id.yaml": (
        stored(ep_id="ep-../../x"),
        f"memory/episodes/2026/11/{EP}.yaml",
        "is not a valid episode ID",
    ),
    "stored_out_of_range.yaml": (
        stored(at="9999-12-31T23:00:00-05:00"),
        f"memory/episodes/2026/11/{EP}.yaml",
        "out of range",
    ),
}

TITLE = "# Playbook\n\n"
RULE = (
    "## PB-01: Lead with the pain\n\nOpen with the reader's pain.\n\n"
    "- Tags: linkedin\n- Learnt in: ep-hkgnqdz88f\n"
)

# name -> (bytes, message)
PLAYBOOK: dict[str, tuple[bytes, str]] = {
    "no_title.md": (RULE.encode(), "the playbook must start with '# Playbook'"),
    "empty.md": (b"", "the playbook must start with '# Playbook'"),
    "nul_line.md": ((TITLE + RULE + "\x00\n").encode(), "holds a NUL character"),
    "esc_in_text.md": ((TITLE + RULE.replace("pain.", "pain.\x1b[0m")).encode(), "holds an escape character"),
    "cr_in_middle.md": (
        (TITLE + RULE.replace("Open with", "Open\rwith")).encode(),
        "holds a carriage return",
    ),
    "latin1.md": ((TITLE + RULE).encode() + b"caf\xe9\n", "not valid UTF-8"),
    "duplicate_id.md": ((TITLE + RULE + "\n" + RULE).encode(), "duplicate rule ID PB-01"),
    "no_learnt_in.md": ((TITLE + RULE.replace("- Learnt in: ep-hkgnqdz88f\n", "")).encode(), "Learnt in"),
    "empty_learnt_in.md": ((TITLE + RULE.replace("ep-hkgnqdz88f", "")).encode(), "Learnt in"),
    "bad_episode_id.md": ((TITLE + RULE.replace("ep-hkgnqdz88f", "ep-../../etc")).encode(), "ep-../../etc"),
    "bad_tag.md": ((TITLE + RULE.replace("linkedin", "Linked In")).encode(), "Linked In"),
    "heading_without_title.md": (
        (TITLE + RULE.replace(": Lead with the pain", ":")).encode(),
        ":3: cannot parse heading",
    ),
    "bad_rule_id.md": (
        (TITLE + RULE.replace("PB-01", "PB-1/../x")).encode(),
        "cannot parse heading '## PB-1/../x",
    ),
    "two_retired.md": (
        (TITLE + RULE + "\n## Retired\n\n## Retired\n").encode(),
        "a second '## Retired' section",
    ),
    "retired_without_reason.md": (
        (TITLE + "## Retired\n\n" + RULE.replace("## PB-01", "### PB-01")).encode(),
        "Retired",
    ),
    "unknown_field.md": ((TITLE + RULE + "- Colour: red\n").encode(), "missing '- Learnt in:' line"),
    "no_text.md": (
        (TITLE + "## PB-01: Title only\n\n- Tags: a\n- Learnt in: ep-hkgnqdz88f\n").encode(),
        "the rule has no text",
    ),
}


def write() -> int:
    count = 0
    for group, cases in (("episode", EPISODE), ("stored", STORED), ("playbook", PLAYBOOK)):
        folder = HERE / group
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        expected: dict[str, object] = {}
        for name, case in cases.items():
            data = case[0]
            if data is not None:
                (folder / name).write_bytes(data)
            else:  # a symlink case: the file in the corpus says where the link points
                (folder / name).write_text(
                    "../../../memory/playbook.md\n" if "playbook" in name else "/etc/passwd\n"
                )
            expected[name] = list(case[1:])
            count += 1
        (folder / "EXPECTED.json").write_text(json.dumps(expected, indent=1, ensure_ascii=True) + "\n")
    return count


if __name__ == "__main__":
    print(f"wrote {write()} cases under {HERE}")
