"""The foundation's commands (episode, rule, index) through CliRunner, and a few real
runs of the installed ``scarwarden`` console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import git, head
from helpers import State

from scarwarden.files import playbook as pb
from scarwarden.files.rule_ids import is_minted
from scarwarden.repo import MemoryRepo

SCARWARDEN = shutil.which("scarwarden")


# -- episode add: bad input names file, line and field, and changes nothing --------------

BOMB = (
    "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for n, p in zip("bcdefghi", "abcdefgh"))
    + "task: *i\noutcome: boom\n"
)

BAD_FILES = {
    "malformed": (
        b"task: Draft the post\n  outcome: : nope\n",
        ["error: in.yaml: not valid YAML", "  in.yaml:2: mapping values are not allowed in this context"],
    ),
    "alias-bomb": (
        BOMB.encode(),
        [
            "error: in.yaml: YAML anchors and aliases are not allowed",
            "  in.yaml:1: anchors/aliases (&name, *name) are refused, to rule out alias bombs",
        ],
    ),
    "unknown-key": (
        b"task: Draft the post\noutcome: meh\ncorection: lead with pain\n",
        [
            "error: in.yaml: invalid episode input; nothing was written",
            "  in.yaml:3: field 'corection': unknown key",
            "    hint: did you mean 'correction'?",
        ],
    ),
    "missing-task": (b"agent: writer\noutcome: meh\n", ["  in.yaml:1: field 'task': missing"]),
    "at-not-a-date": (
        b"task: t\noutcome: o\nat: last tuesday\n",
        ["  in.yaml:3: field 'at': 'last tuesday' is not a date-time with a time zone"],
    ),
    "tags-not-a-list": (
        b"task: t\noutcome: o\ntags: linkedin post\n",
        ["  in.yaml:3: field 'tags': must be a list, got str"],
    ),
    "tag-with-space": (
        b"task: t\noutcome: o\ntags: [LinkedIn, social media]\n",
        ["  in.yaml:3: field 'tags': tag 'social media' is not a slug"],
    ),
    "escaping-id": (
        b"id: ep-../../etc\ntask: t\noutcome: o\n",
        ["  in.yaml:1: field 'id': 'ep-../../etc' is not a valid episode ID"],
    ),
    "upper-case-id": (
        b"id: ep-ABCDEFGHJK\ntask: t\noutcome: o\n",
        ["  in.yaml:1: field 'id': 'ep-ABCDEFGHJK' is not a valid episode ID"],
    ),
    "invalid-utf8": (
        b"task: t\noutcome: caf\xe9 au lait\n",
        ["error: in.yaml: not valid UTF-8", "  in.yaml:2: field 'outcome': invalid byte 0xe9 at offset 20"],
    ),
    "ten-megabytes": (
        b"task: t\noutcome: " + b"x" * (10 * 1024 * 1024) + b"\n",
        [
            "  in.yaml:2: field 'outcome': episode is at least 10,485,794 bytes, over the 64 KiB "
            "cap ('outcome' alone is 10,485,760 bytes)"
        ],
    ),
    "empty": (b"", ["error: in.yaml: no episode in the input"]),
    "deeply-nested": (
        b"task: " + b"[" * 30_000 + b"]" * 30_000 + b"\n",
        ["error: in.yaml: YAML nested more than 64 levels deep"],
    ),
}


@pytest.fixture(scope="module")
def shared_demo(tmp_path_factory: pytest.TempPathFactory) -> MemoryRepo:
    """One demo repository for the bad-input cases: each asserts it changed nothing."""
    from scarwarden.files.scaffold import init
    from scarwarden.repo import open_repo

    home = tmp_path_factory.mktemp("shared-home")
    (home / ".gitconfig").write_text("[user]\n\tname = T\n\temail = t@example.com\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        root = tmp_path_factory.mktemp("shared-demo")
        git(root, "init", "-q", "-b", "main")
        init(open_repo(root, initialised=False), demo=True)
    return open_repo(root)


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_episode_file_is_refused_and_nothing_changes(make_cli, shared_demo, case: str) -> None:
    demo_repo, cli = shared_demo, make_cli(shared_demo.root)
    raw, expected = BAD_FILES[case]
    (demo_repo.root / "in.yaml").write_bytes(raw)
    before = State.of(demo_repo)
    result = cli("episode", "add", "--file", str(demo_repo.root / "in.yaml"))
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.replace(str(demo_repo.root) + "/", "").splitlines()
    for line in expected:
        assert line in lines, (line, lines)
    assert State.of(demo_repo) == before
    (demo_repo.root / "in.yaml").unlink()


def test_ids_never_write_outside_the_ledger(make_cli, shared_demo, tmp_path: Path) -> None:
    demo_repo, cli = shared_demo, make_cli(shared_demo.root)
    before = State.of(demo_repo)
    outside = sorted(p.name for p in tmp_path.iterdir())
    for bad in ("ep-../../../x", "../ep-abcdef", "ep-abc/../../d", "/tmp/ep-abc", "ep-abc\n"):
        payload = json.dumps({"id": bad, "task": "t", "outcome": "o"})
        result = cli("episode", "add", "--file", "-", input=payload)
        assert result.exit_code == 1
        assert f"field 'id': {bad!r} is not a valid episode ID" in result.stderr
    assert State.of(demo_repo) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == outside


def test_flags_are_validated_like_files(make_cli, shared_demo) -> None:
    demo_repo, cli = shared_demo, make_cli(shared_demo.root)
    before = State.of(demo_repo)
    result = cli(
        "episode",
        "add",
        "--task",
        "t",
        "--outcome",
        "o",
        "--tag",
        "ok,Not Ok",
        "--ref",
        "ep-NOPE",
        "--rule-applied",
        "pb-1",  # a spelling citations accept: stored as PB-01 (issue 18)
        "--rule-applied",
        "rule-1",
        "--at",
        "2026-11-03",
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: episode: invalid episode input; nothing was written",
        "  episode: field 'at': '2026-11-03' is not a date-time with a time zone",
        "    hint: use ISO 8601 with a zone, e.g. 2026-11-03T10:12:00Z",
        "  episode: field 'tags': tag 'Not Ok' is not a slug",
        "    hint: tags use a-z, 0-9 and '-' only, e.g. subject-line",
        "  episode: field 'refs': 'ep-NOPE' is not an episode ID",
        "  episode: field 'rules_applied': 'rule-1' is not a rule ID",
        "    hint: rule IDs look like PB-03",
    ]
    assert cli("episode", "add", "--outcome", "o").exit_code == 2
    assert State.of(demo_repo) == before


def test_episode_add_outside_git_and_without_memory(tmp_path: Path, make_cli, git_repo) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = make_cli(plain)("episode", "add", "--task", "t", "--outcome", "o")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {plain} is not inside a git repository",
        # The test's CLI passes --repo: the hint names that folder (issue 28).
        f"hint: run 'git init {plain}' first, or give -C/--repo a git repository",
    ]
    assert list(plain.iterdir()) == []
    result = make_cli(git_repo)("episode", "add", "--task", "t", "--outcome", "o")
    assert result.exit_code == 2
    assert f"error: no Scarwarden memory in {git_repo} (no memory/playbook.md)" in result.stderr
    assert "scarwarden init" in result.stderr
    assert sorted(p.name for p in git_repo.iterdir()) == [".git"]


# -- episode add: good input ----------------------------------------------------------------


def test_episode_add_from_flags(cli, demo_repo) -> None:
    result = cli(
        "episode",
        "add",
        "--task",
        "Announce the webinar",
        "--action",
        "No timezone",
        "--outcome",
        "People came late",
        "--correction",
        "State the timezone",
        "--corrected-by",
        "ines",
        "--agent",
        "writer",
        "--tag",
        "Webinar,email",
        "--tag",
        "timezone",
        "--source",
        "correction",
        "--ref",
        "ep-9ak5fm33w3",
        "--rule-applied",
        "PB-13",
        "--at",
        "2026-11-28T16:00:00+01:00",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    ep_id = data["id"]
    assert data == {
        "id": ep_id,
        "at": "2026-11-28T15:00:00Z",
        "agent": "writer",
        "task": "Announce the webinar",
        "action": "No timezone",
        "outcome": "People came late",
        "correction": "State the timezone",
        "corrected_by": "ines",
        "tags": ["webinar", "email", "timezone"],
        "source": "correction",
        "refs": ["ep-9ak5fm33w3"],
        "rules_applied": ["PB-13"],
    }
    assert (demo_repo.root / f"memory/episodes/2026/11/{ep_id}.yaml").read_text() == (
        f"id: {ep_id}\nat: 2026-11-28T15:00:00Z\nagent: writer\ntask: Announce the webinar\n"
        "action: No timezone\noutcome: People came late\ncorrection: State the timezone\n"
        "corrected_by: ines\ntags: [webinar, email, timezone]\nsource: correction\n"
        "refs: [ep-9ak5fm33w3]\nrules_applied: [PB-13]\n"
    )
    message = git(demo_repo.root, "log", "-1", "--format=%B").stdout
    assert message == f"episode: Announce the webinar\n\nScarwarden-Episode: {ep_id}\n\n"
    plain = cli("episode", "add", "--task", "x", "--outcome", "y")
    assert plain.stdout.strip().startswith("ep-") and plain.stderr == "Committed 1 episode(s)\n"


@pytest.mark.parametrize("form", ["yaml-list", "json-list", "json-lines"])
def test_batch_from_stdin_is_one_commit(cli, demo_repo, form: str) -> None:
    items = [{"task": f"Imported {i}", "outcome": "o", "tags": ["import"]} for i in range(3)]
    text = {
        "yaml-list": "".join(f"- task: Imported {i}\n  outcome: o\n  tags: [import]\n" for i in range(3)),
        "json-list": json.dumps(items),
        "json-lines": "\n".join(json.dumps(i) for i in items),
    }[form]
    before = head(demo_repo.root)
    result = cli("episode", "add", "--file", "-", "--json", input=text)
    assert result.exit_code == 0, result.stderr
    added = json.loads(result.stdout)
    assert [e["task"] for e in added] == ["Imported 0", "Imported 1", "Imported 2"]
    assert git(demo_repo.root, "rev-list", "--count", f"{before}..HEAD").stdout == "1\n"
    body = git(demo_repo.root, "log", "-1", "--format=%B").stdout
    assert body.splitlines()[0] == "episodes: import 3 episodes"
    assert [line.split(": ")[1] for line in body.splitlines() if line.startswith("Scarwarden-Episode:")] == [
        e["id"] for e in added
    ]
    listed = json.loads(cli("episode", "list", "--tag", "import", "--json").stdout)
    assert sorted(e["id"] for e in listed) == sorted(e["id"] for e in added)


def test_batch_with_bad_third_item_via_cli(cli, demo_repo) -> None:
    lines = [
        json.dumps({"task": "a", "outcome": "o"}),
        json.dumps({"task": "b", "outcome": "o"}),
        json.dumps({"task": "c", "outcome": "o", "at": "2026-13-40T00:00:00Z"}),
        json.dumps({"task": "d", "outcome": "o"}),
    ]
    (demo_repo.root / "import.jsonl").write_text("\n".join(lines) + "\n")
    before = State.of(demo_repo)
    result = cli("-C", str(demo_repo.root), "episode", "add", "--file", str(demo_repo.root / "import.jsonl"))
    assert result.exit_code == 1
    assert (
        f"  {demo_repo.root}/import.jsonl:3: field 'at': '2026-13-40T00:00:00Z' is not a "
        "real date or time (month must be in 1..12) (item 3)"
    ) in result.stderr.splitlines()
    assert State.of(demo_repo) == before


def test_file_and_flags_do_not_mix(cli, demo_repo) -> None:
    result = cli("episode", "add", "--file", "-", "--task", "t", input="task: t\noutcome: o\n")
    assert result.exit_code == 2
    assert "error: --file cannot be combined with episode flags" in result.stderr


def test_no_commit_stages(cli, demo_repo) -> None:
    before = head(demo_repo.root)
    result = cli("episode", "add", "--task", "t", "--outcome", "o", "--no-commit")
    assert result.exit_code == 0 and result.stderr == "Staged 1 episode(s)\n"
    ep_id = result.stdout.strip()
    assert head(demo_repo.root) == before
    assert git(demo_repo.root, "diff", "--cached", "--name-only").stdout.strip().endswith(f"/{ep_id}.yaml")
    assert json.loads(cli("episode", "show", ep_id, "--json").stdout)["id"] == ep_id


# -- reading ----------------------------------------------------------------------------------


def test_episode_show_word_for_word(cli, demo_repo) -> None:
    path = "memory/episodes/2026/08/ep-wmjgdnc59j.yaml"
    result = cli("episode", "show", "ep-wmjgdnc59j")
    assert result.exit_code == 0
    assert result.stdout == (f"# {path}\n" + (demo_repo.root / path).read_text() + "# cited by: PB-02\n")
    data = json.loads(cli("episode", "show", "ep-wmjgdnc59j", "--json").stdout)
    assert data["path"] == path and data["cited_by"] == ["PB-02"]
    assert data["task"] == "Promote the summer sale on Twitter with the code LOOP30"
    missing = cli("episode", "show", "ep-doesnotexist")
    assert missing.exit_code == 2
    assert "error: no episode ep-doesnotexist in the ledger" in missing.stderr


def test_episode_list_filters(cli, demo_repo) -> None:
    def listed(*args: str) -> list[dict[str, object]]:
        result = cli("episode", "list", *args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)  # type: ignore[no-any-return]

    everything = listed()
    assert len(everything) == 34  # 32 + the two visual episodes (issue 19)
    assert [e["id"] for e in listed("--newest-first", "--limit", "2")] == [
        e["id"] for e in everything[::-1][:2]
    ]
    tagged = listed("--tag", "Twitter")
    assert tagged and all("twitter" in e["tags"] for e in tagged)  # type: ignore[operator]
    sept = listed("--since", "2026-09-01", "--until", "2026-09-30")
    assert len(sept) == 11 and all(str(e["at"]).startswith("2026-09") for e in sept)
    assert listed("--until", "2026-09-30T23:59:59Z") == [e for e in everything if str(e["at"]) < "2026-10"]
    support = listed("--agent", "support-triage")
    assert support == [e for e in everything if e.get("agent") == "support-triage"]
    assert 0 < len(support) < len(everything)
    grep = listed("--grep", "coupon")
    assert grep and all("coupon" in json.dumps(e).lower() for e in grep)
    assert len(grep) < len(everything)
    assert listed("--grep", "nothing-like-this-anywhere") == []
    # Filters combine (all must hold); an age is a bound too.
    both = listed("--agent", "support-triage", "--since", "2026-09-01")
    assert both == [e for e in support if str(e["at"]) >= "2026-09"] and 0 < len(both) < len(support)
    assert listed("--since", "36500d") == everything
    bad = cli("episode", "list", "--since", "last week")
    assert bad.exit_code == 2 and "cannot read 'last week' as a date or time" in bad.stderr
    text = cli("episode", "list", "--tag", "gdpr")
    first = text.stdout.splitlines()[0]
    assert first.startswith("ep-") and "  2026-" in first and "[" in first
    empty = cli("episode", "list", "--agent", "nobody")
    assert empty.stdout == "" and empty.stderr == "no episodes match\n"


# -- rules --------------------------------------------------------------------------------------


def test_rule_add_refuses_unresolved_citations(cli, demo_repo) -> None:
    before = State.of(demo_repo)
    playbook = demo_repo.playbook_path.read_bytes()
    result = cli(
        "rule",
        "add",
        "--text",
        "Always state the timezone.",
        "--tag",
        "webinar",
        "--cites",
        "ep-9ak5fm33w3,ep-nosuchthing",
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "error: cannot add the rule: ep-nosuchthing is not in the ledger (committed or staged)"
    )
    # an episode that exists only as an untracked file does not count either
    from helpers import write_episode

    write_episode(demo_repo, "ep-untracked01")
    result = cli("rule", "add", "--text", "x.", "--tag", "a", "--cites", "ep-untracked01")
    assert result.exit_code == 1
    assert "ep-untracked01 is not in the ledger (committed or staged)" in result.stderr
    (demo_repo.root / "memory/episodes/2026/11/ep-untracked01.yaml").unlink()
    assert demo_repo.playbook_path.read_bytes() == playbook
    assert State.of(demo_repo) == before
    # once staged, it resolves
    write_episode(demo_repo, "ep-untracked01")
    git(demo_repo.root, "add", "memory/episodes/2026/11/ep-untracked01.yaml")
    ok = cli(
        "rule", "add", "--text", "Stage first.", "--tag", "a", "--cites", "ep-untracked01", "--no-commit"
    )
    assert ok.exit_code == 0 and is_minted(ok.stdout.strip()) and ok.stdout.endswith("\n")


def test_rule_add_mints_an_id_no_rule_ever_had_and_commits(cli, demo_repo) -> None:
    book = pb.parse(demo_repo.playbook_path.read_text())
    # The ID this rule's content would mint is already on record (retired): never reused.
    taken = book.new_id(
        "Give webinar times in UTC",
        "Give webinar times in UTC. Link a converter.",
        ["webinar", "timezone"],
        ["ep-9ak5fm33w3", "ep-04yqq457qh"],
    )
    retired = pb.make_rule(taken, "An old rule", "Old.", ["old"], ["ep-9ak5fm33w3"])
    book = pb.Playbook(
        book.rules, (pb.Rule(**{**retired.__dict__, "retired": True, "reason": "wrong"}),), book.preamble
    )
    demo_repo.playbook_path.write_text(pb.render(book))
    git(demo_repo.root, "commit", "-qam", f"retire {taken}")
    result = cli(
        "rule",
        "add",
        "--text",
        "Give webinar times in UTC. Link a converter.",
        "--tag",
        "Webinar,timezone",
        "--cites",
        "ep-9ak5fm33w3, ep-04yqq457qh",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    rule = json.loads(result.stdout)
    new = rule.pop("id")
    assert is_minted(new) and new != taken
    assert rule == {
        "title": "Give webinar times in UTC",
        "text": "Give webinar times in UTC. Link a converter.",
        "tags": ["webinar", "timezone"],
        "episode_ids": ["ep-9ak5fm33w3", "ep-04yqq457qh"],
    }
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    message = git(demo_repo.root, "log", "-1", "--format=%B").stdout
    assert message.splitlines()[0] == f"rule: add {new} Give webinar times in UTC"
    assert f"Scarwarden-Rule: {new}" in message.splitlines()
    assert git(demo_repo.root, "show", "--name-only", "--format=", "HEAD").stdout == "memory/playbook.md\n"
    text = demo_repo.playbook_path.read_text()
    assert pb.render(pb.parse(text)) == text
    assert text.index(f"## {new}:") < text.index("## Retired")
    titled = cli(
        "rule", "add", "--text", "Body.", "--title", "My title", "--tag", "t", "--cites", "ep-9ak5fm33w3"
    )
    titled_id = titled.stdout.strip()
    assert is_minted(titled_id) and titled.stderr == f"Committed {titled_id}: My title\n"


def test_rule_add_commits_a_staged_cited_episode_with_the_rule(cli, demo_repo) -> None:
    # A staged episode resolves; committing the rule without it would make a commit whose
    # rule cites an episode outside its own tree (the gate and `verify` reject that).
    from helpers import write_episode

    from scarwarden.gate.hooks import install
    from scarwarden.gate.verify import verify

    install(demo_repo.root)
    rel = write_episode(demo_repo, "ep-staged0001")
    git(demo_repo.root, "add", rel)
    (demo_repo.root / "unrelated.txt").write_text("staged, not part of the rule\n")
    git(demo_repo.root, "add", "unrelated.txt")
    result = cli(
        "rule", "add", "--text", "Stage first.", "--tag", "a", "--cites", "ep-staged0001,ep-9ak5fm33w3"
    )
    assert result.exit_code == 0, result.output
    assert git(demo_repo.root, "show", "--name-only", "--format=", "HEAD").stdout.split() == [
        "memory/episodes/2026/11/ep-staged0001.yaml",
        "memory/playbook.md",
    ]
    message = git(demo_repo.root, "log", "-1", "--format=%B").stdout.splitlines()
    assert f"Scarwarden-Rule: {result.stdout.strip()}" in message
    assert "Scarwarden-Episode: ep-staged0001" in message
    assert "Scarwarden-Episode: ep-9ak5fm33w3" not in message  # committed long ago
    assert git(demo_repo.root, "status", "--porcelain").stdout == "A  unrelated.txt\n"
    assert verify(demo_repo.root).ok


def test_rule_add_refuses_to_commit_someone_elses_playbook_edit(cli, demo_repo) -> None:
    demo_repo.playbook_path.write_text(demo_repo.playbook_path.read_text() + "\n")
    before = State.of(demo_repo)
    result = cli("rule", "add", "--text", "x.", "--tag", "a", "--cites", "ep-9ak5fm33w3")
    assert result.exit_code == 2
    assert "memory/playbook.md has uncommitted changes" in result.stderr
    assert State.of(demo_repo) == before


def test_rule_show_is_the_audit(cli, demo_repo) -> None:
    result = cli("rule", "show", "pb-01")
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("PB-01: Lead LinkedIn posts with the reader's pain\n")
    for ep_id in ("ep-hkgnqdz88f", "ep-vd4adns6h9", "ep-72r3dswafq"):
        path = next(demo_repo.episodes_dir.rglob(f"{ep_id}.yaml"))
        assert f"--- learnt in {ep_id} ---\n{path.read_text()}" in out
    assert "introduced  scarwarden: initialise demo memory" in out
    # a later commit changes the rule: the history shows it, after the introduction
    path = demo_repo.playbook_path
    path.write_text(path.read_text().replace("Use one emoji at most", "Use no emoji"))
    git(demo_repo.root, "commit", "-qam", "PB-01: no emoji at all")
    # ...and a commit touching only another rule does not appear
    path.write_text(path.read_text().replace("within four business hours", "within 4 hours"))
    git(demo_repo.root, "commit", "-qam", "PB-03: shorter")
    data = json.loads(cli("rule", "show", "PB-01", "--json").stdout)
    assert [(h["kind"], h["subject"]) for h in data["history"]] == [
        ("introduced", "scarwarden: initialise demo memory"),
        ("changed", "PB-01: no emoji at all"),
    ]
    assert "-Open every LinkedIn post" in data["history"][1]["diff"]
    assert [e["id"] for e in data["episodes"]] == ["ep-hkgnqdz88f", "ep-vd4adns6h9", "ep-72r3dswafq"]
    assert all(e["found"] for e in data["episodes"])
    text = cli("rule", "show", "PB-01").stdout
    assert text.index("introduced") < text.index("changed     PB-01: no emoji at all")
    missing = cli("rule", "show", "PB-99")
    assert missing.exit_code == 2 and "error: no rule PB-99 in the playbook" in missing.stderr


def test_rule_list(cli, demo_repo) -> None:
    rules = json.loads(cli("rule", "list", "--json").stdout)
    keys = {"id", "title", "text", "tags", "episode_ids"}
    assert len(rules) == 15 and all(set(r) - {"applies_to"} == keys for r in rules)
    # The demo's one visual rule says so (issue 19); the others have no applies_to key.
    assert [(r["id"], r["applies_to"]) for r in rules if "applies_to" in r] == [("PB-8wy7w60p", ["images"])]
    assert [r["id"] for r in json.loads(cli("rule", "list", "--tag", "GDPR", "--json").stdout)] == ["PB-06"]
    text = cli("rule", "list").stdout
    assert "PB-14: " in text and "  learnt in: ep-" in text


def test_index_command(cli, demo_repo) -> None:
    first = json.loads(cli("index", "--json").stdout)
    assert (first["mode"], first["episodes"], first["rules"]) == ("rebuild", 34, 15)
    assert first["commit"] == head(demo_repo.root)
    again = json.loads(cli("index", "--json").stdout)
    assert (again["mode"], again["episodes_indexed"], again["rules_changed"]) == ("incremental", 0, 0)
    forced = json.loads(cli("index", "--rebuild", "--json").stdout)
    assert (forced["mode"], forced["reason"], forced["episodes_indexed"]) == ("rebuild", "requested", 34)
    text = cli("index").stdout
    assert text.startswith(f"Refreshed {demo_repo.index_path} in ")
    assert "34 episodes, 15 rules" in text


def test_index_says_when_the_playbook_does_not_parse(cli, demo_repo) -> None:
    """`index` exited 0 with "15 rules" while the playbook did not parse (and recall
    refused it): it now names the problem, exits 1, and says the rules are the last
    playbook that parsed; fixed, it is 0 again."""
    cli("index")
    path = demo_repo.playbook_path
    good = path.read_text(encoding="utf-8")
    first = good.index("- Tags: ")
    path.write_text(good[:first] + "- Tags: not a slug, " + good[first + 8 :], encoding="utf-8")
    broken = cli("index")
    assert broken.exit_code == 1
    assert "34 episodes, 15 rules" in broken.stdout
    assert "tag 'not a slug' is not a slug" in broken.stderr
    assert "the index keeps the rules of the last playbook that parsed" in broken.stderr
    # The gate reads git's index: it sees this unstaged edit only once it is added
    # (the hint sent users to 'check --all', which said OK).
    assert "then 'git add memory/playbook.md' and 'scarwarden check'" in broken.stderr
    assert "check --all" not in broken.stderr
    data = cli("index", "--json")
    assert data.exit_code == 1
    report = json.loads(data.stdout)
    assert report["rules"] == 15 and "tag 'not a slug' is not a slug" in report["playbook_error"]
    path.write_text(good, encoding="utf-8")
    fixed = cli("index", "--json")
    assert fixed.exit_code == 0 and json.loads(fixed.stdout)["playbook_error"] is None


# -- the installed console script -----------------------------------------------------------

HEAVY = ("git", "requests", "flask", "mcp")


def _modules_after(args: list[str], cwd: Path) -> list[str]:
    code = textwrap.dedent(f"""
        import json, sys
        from scarwarden.cli.group import main
        try:
            main({args!r})
        except SystemExit:
            pass
        print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})),
              file=sys.stderr)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
    return json.loads(proc.stderr.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_help_and_reads_do_not_import_gitpython_or_requests(demo_repo) -> None:
    assert _modules_after(["--help"], demo_repo.root) == []
    assert _modules_after(["episode", "list", "--json"], demo_repo.root) == []
    assert _modules_after(["episode", "show", "ep-9ak5fm33w3"], demo_repo.root) == []


def test_version_and_help_start_without_yaml_sqlite_git_or_recall(tmp_path: Path) -> None:
    """``--version`` and ``--help`` import the group alone: no command module, no YAML,
    no SQLite, no git layer, no recall engine, not even logging (issue 28: every
    ``scarwarden`` started pays its imports; the commands load theirs when they run)."""
    code = textwrap.dedent("""
        import json, sys
        from scarwarden.cli.group import main
        for args in (["--version"], ["--help"]):
            try:
                main(args)
            except SystemExit:
                pass
        heavy = ("yaml", "sqlite3", "logging", "scarwarden.cli.commands.", "scarwarden.git",
                 "scarwarden.repo", "scarwarden.recall", "scarwarden.index", "scarwarden.files")
        print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert "scarwarden, version" in proc.stdout and "Commands:" in proc.stdout
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_recall_starts_without_the_write_path(demo_repo) -> None:
    """A one-shot ``recall`` reads: it imports neither the episode writer, the transcript
    importer, the secret scan nor the media checks (issue 30: cold recall within 6x
    ``python -c pass``; the API's package used to load the importer for one name)."""
    code = textwrap.dedent("""
        import json, sys
        from scarwarden.cli.group import main
        try:
            main(["recall", "--no-log", "--json", "Post our discount code on Twitter"])
        except SystemExit:
            pass
        write = ("scarwarden.files.record", "scarwarden.files.transcripts", "scarwarden.files.secret_scan",
                 "scarwarden.files.media", "scarwarden.files.write_journal", "yaml")
        print(json.dumps(sorted(m for m in sys.modules if m.startswith(write))), file=sys.stderr)
    """)
    for _ in range(2):  # the first builds the index (which parses the episodes' YAML)
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=demo_repo.root, capture_output=True, text=True
        )
    assert json.loads(proc.stdout)["verdict"] in ("ACT", "ACT_AND_FLAG", "ASK_HUMAN"), proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
    import scarwarden.api

    assert scarwarden.api.ImportResult.__name__ == "ImportResult"  # still there, on first use


def test_a_scarwarden_started_by_a_test_reads_compiled_modules() -> None:
    """Even under PYTHONDONTWRITEBYTECODE (CI sets it), every module a ``scarwarden`` the
    tests start imports has its bytecode (compiled once a run by tests/conftest.py):
    compiling them from source again cost each such process ~80 ms of CPU (issue 28)."""
    code = (
        "import os, sys, scarwarden.cli.group, scarwarden.repo, scarwarden.recall.engine\n"
        "ours = [m for n, m in sys.modules.items()\n"
        "        if n.startswith('scarwarden') and getattr(m, '__cached__', None)]\n"
        "print(len(ours), [m.__name__ for m in ours if not os.path.exists(m.__cached__)])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, missing = proc.stdout.split(" ", 1)
    assert int(count) >= 10 and missing.strip() == "[]", proc.stdout


def test_python_dash_m_and_version() -> None:
    proc = subprocess.run([sys.executable, "-m", "scarwarden", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert proc.stdout.startswith("Usage: scarwarden [OPTIONS] COMMAND [ARGS]...")
    assert "episode" in proc.stdout and "Examples:" in proc.stdout
    from scarwarden import __version__

    proc = subprocess.run([sys.executable, "-m", "scarwarden", "--version"], capture_output=True, text=True)
    assert proc.stdout.strip() == f"scarwarden, version {__version__}"


@pytest.mark.skipif(SCARWARDEN is None, reason="the console script is not installed")
def test_end_to_end_with_the_console_script(tmp_path: Path) -> None:
    repo = tmp_path / "e2e"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")

    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCARWARDEN), *args], cwd=repo, capture_output=True, text=True, input=input)

    assert run("init", "--demo", "--no-hooks").returncode == 0
    added = run(
        "episode",
        "add",
        "--task",
        "Post our discount code on Twitter",
        "--outcome",
        "Code leaked",
        "--tag",
        "discount,twitter",
    )
    assert added.returncode == 0, added.stderr
    ep_id = added.stdout.strip()
    shown = run("episode", "show", ep_id)
    assert "task: Post our discount code on Twitter\n" in shown.stdout
    assert "# cited by: no rule yet" in shown.stdout
    rule = run("rule", "add", "--text", "Never tweet codes.", "--tag", "discount", "--cites", ep_id)
    rule_id = rule.stdout.strip()
    assert is_minted(rule_id) and rule.stdout == f"{rule_id}\n"
    audit = run("rule", "show", rule_id.upper())  # as a reader might type it
    assert f"--- learnt in {ep_id} ---" in audit.stdout and "Code leaked" in audit.stdout
    # outside a git repository: exit 2 and a clear message
    outside = subprocess.run(
        [str(SCARWARDEN), "episode", "add", "--task", "t", "--outcome", "o"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert outside.returncode == 2
    assert outside.stderr.startswith(f"error: {tmp_path} is not inside a git repository")
    assert git(repo, "status", "--porcelain").stdout == ""


@pytest.mark.skipif(SCARWARDEN is None, reason="the console script is not installed")
def test_concurrent_writers_both_commit(demo_repo: MemoryRepo) -> None:
    procs = [
        subprocess.Popen(
            [
                str(SCARWARDEN),
                "-C",
                str(demo_repo.root),
                "episode",
                "add",
                "--task",
                f"Writer {i}",
                "--outcome",
                "o",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    ids = {out.strip() for out, _ in outs}
    log = git(demo_repo.root, "log", "-3", "--format=%(trailers:key=Scarwarden-Episode,valueonly)")
    assert {line for line in log.stdout.splitlines() if line} == ids
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


OWN_FOLDER = "the memory needs a folder of its own"


@pytest.mark.parametrize(
    "settings, expected",
    [
        (
            "recall:\n  act_treshold: 3\n",
            [
                "error: unknown setting recall.act_treshold",
                "hint: did you mean 'recall.act_threshold'? known settings in 'recall': act_tag_hits, "
                "act_threshold, floor, limit",
            ],
        ),
        (
            "recall:\n  limit: [3\n",
            [
                "error: scarwarden.yaml: not valid YAML",
                "  scarwarden.yaml:3: did not find expected ',' or ']'",
            ],
        ),
        (
            "memory_dir: ../elsewhere\n",
            ["error: memory_dir in scarwarden.yaml must be a relative folder inside the repository"],
        ),
        *(
            (f"memory_dir: {value}\n", [f"error: memory_dir in scarwarden.yaml is {where}: {OWN_FOLDER}"])
            for value, where in (
                (".", "the repository itself"),
                ("./", "the repository itself"),
                (".git/mem", "inside .git/"),
                (".scarwarden", "inside .scarwarden/"),
            )
        ),
        ("recall:\n  limit: '5'\n", ["error: recall.limit must be int, got str ('5')"]),
        ("modle:\n  timeout: 3\n", ["error: unknown setting(s) in scarwarden.yaml: modle"]),
    ],
)
def test_bad_settings_exit_2_naming_the_key(cli, demo_repo, settings: str, expected: list[str]) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text(settings)
    result = cli("episode", "list", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    for line in expected:
        assert line in lines, (line, lines)


def test_show_prints_a_hand_written_file_as_written(cli, demo_repo) -> None:
    rel = "memory/episodes/2026/11/ep-handwrit01.yaml"
    text = (
        "# written by hand after the incident call\n"
        "id: ep-handwrit01\nat: 2026-11-25T08:00:00Z\n"
        'task: "Answer the outage ticket"\n'
        "outcome: >\n  The customer waited\n  two days.\n"
        "tags:\n  - outage\n  - ticket\n"
    )
    (demo_repo.root / rel).write_text(text)
    git(demo_repo.root, "add", rel)
    git(demo_repo.root, "commit", "-q", "-m", "hand-written episode")
    shown = cli("episode", "show", "ep-handwrit01")
    assert shown.stdout == f"# {rel}\n{text}# cited by: no rule yet\n"
    assert (
        json.loads(cli("episode", "show", "ep-handwrit01", "--json").stdout)["outcome"]
        == "The customer waited two days.\n"
    )
    added = cli(
        "rule", "add", "--text", "Page on-call for outages.", "--tag", "outage", "--cites", "ep-handwrit01"
    )
    shown_rule = cli("rule", "show", added.stdout.strip()).stdout
    assert f"--- learnt in ep-handwrit01 ---\n{text}" in shown_rule


def test_a_playbook_deleted_from_the_working_tree_is_named(cli, demo_repo) -> None:
    """A playbook the last commit has but the working tree lost read as a memory with no
    rules: recall said "nothing relevant is remembered" (ASK_HUMAN) for every task. It is
    now named, with the way back, and not as something to stage."""
    cli("index")
    path = demo_repo.playbook_path
    good = path.read_bytes()
    path.unlink()
    recalled = cli("recall", "Write a LinkedIn post about the launch")
    assert recalled.exit_code == 1
    said = "memory/playbook.md: missing from the working tree, while the last commit has it"
    assert said in recalled.stderr
    assert "hint: restore it (git restore memory/playbook.md)" in recalled.stderr
    assert "git add" not in recalled.stderr
    assert cli("index").exit_code == 1 and cli("index", "--rebuild").exit_code == 1
    path.write_bytes(good)
    assert cli("recall", "Write a LinkedIn post about the launch").exit_code == 0


def test_a_warning_is_printed_by_a_fresh_process(demo_repo: MemoryRepo) -> None:
    # The logging package is imported on the first warning (scarwarden/logs.py), and the
    # CLI's handler with it: a fresh `scarwarden` process (never CliRunner's, where
    # logging is loaded already) still prints the warning as "scarwarden: ...", once.
    bad = demo_repo.episodes_dir / "2026" / "11" / "ep-badfields1.yaml"
    bad.write_text("id: ep-badfields1\ntask: 5\n", encoding="utf-8")
    proc = subprocess.run(
        ["scarwarden", "-C", str(demo_repo.root), "episode", "list"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    warning = (
        "scarwarden: skipped invalid episode memory/episodes/2026/11/ep-badfields1.yaml: "
        "field 'at': missing (and 2 more problems)"
    )
    assert proc.stderr.count(warning) == 1, proc.stderr
