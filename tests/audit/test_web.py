"""The audit web UI through Flask's test client, the static export, and `serve`."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import git
from distilled_repo import SCRIPT, Distilled

from scarwarden.repo import MemoryRepo

flask = pytest.importorskip("flask")

from scarwarden.audit.web.app import create_app  # noqa: E402

TOKEN = "test-csrf-token"
ASK_TASK = "Book the team offsite venue in Lisbon"


@pytest.fixture
def client(distilled: Distilled):  # type: ignore[no-untyped-def]
    app = create_app(distilled.repo.root, csrf_token=TOKEN, allowed_hosts={"localhost", "127.0.0.1"})
    return app.test_client()


BLOCKS = {
    "p",
    "div",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "li",
    "td",
    "th",
    "tr",
    "section",
    "article",
    "pre",
    "table",
    "form",
    "label",
    "footer",
    "header",
    "main",
    "summary",
}


def text_of(html: str) -> str:
    """The page's visible text, with whitespace collapsed (what a reader sees)."""

    class P(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

        def handle_starttag(self, tag: str, attrs: object) -> None:
            if tag in BLOCKS:
                self.parts.append(" ")

        def handle_endtag(self, tag: str) -> None:
            if tag in BLOCKS:
                self.parts.append(" ")

    p = P()
    p.feed(html)
    return " ".join("".join(p.parts).split())


def hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', html)


def test_playbook_lists_rules_with_links_filters_and_search(client, distilled) -> None:  # type: ignore[no-untyped-def]
    r = client.get("/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    links = hrefs(html)
    for n in range(1, 16):
        assert f"/rules/PB-{n:02d}" in links
    assert f"/episodes/{distilled.emoji.id}" in links and "/?tag=linkedin" in links
    page = text_of(html)
    # The demo's 14 + 1 visual rule (issue 19), one retired by the distill; 34 + 3 episodes,
    # of which the active rules cite those counted here (issue 28: was the ledger's 37).
    from scarwarden.files.playbook_edit import load_playbook

    cited = {ep for r in load_playbook(distilled.repo).rules if not r.retired for ep in r.episode_ids}
    assert f"15 active rules and 1 retired, learnt from {len(cited)} episodes (37 in the ledger)" in page
    assert "Retired Retired rules keep their IDs on record" in page
    assert "Retired: Merged into PB-15" in page
    tagged = text_of(client.get("/?tag=incident").get_data(as_text=True))
    assert "PB-09" in tagged and "PB-14" in tagged and "PB-15" in tagged
    assert "PB-01" not in tagged and "Showing 3 rules tagged incident" in tagged
    found = text_of(client.get("/?q=coupon+sites").get_data(as_text=True))
    assert "PB-02" in found and "PB-03" not in found and "Showing 1 rule matching" in found
    # Stems match too: "announcing" finds the rule that says "announcement".
    assert "PB-01" in text_of(client.get("/?q=announcing").get_data(as_text=True))


def test_rule_page_has_every_cited_episode_word_for_word_and_history(client, distilled) -> None:  # type: ignore[no-untyped-def]
    html = client.get("/rules/PB-01").get_data(as_text=True)
    page = text_of(html)
    assert "PB-01 Lead LinkedIn posts with the reader's pain" in page
    assert "Applies to: images" not in page  # the demo's visual rule says it (issue 19)
    assert "Applies to: images" in text_of(client.get("/rules/PB-8wy7w60p").get_data(as_text=True))
    assert "Learnt in 4 episodes" in page
    emoji = distilled.emoji
    for key in ("task", "action", "outcome", "correction", "corrected_by"):
        assert f"{key} {emoji.get(key)}" in page
    assert (
        "correction Open with the pain the reader already feels, such as the Monday "
        "morning ticket backlog, then introduce the beta; move the hashtags to the end"
    ) in page
    assert f'href="/episodes/{emoji.id}"' in html
    # History: newest first, each commit with its diff and trailers.
    history = page.split("History", 1)[1]
    assert history.index("changed") < history.index("introduced")
    assert "distill: 3 episodes -> 1 new rule, 1 changed, 1 retired" in history
    assert "Scarwarden-Distill offline" in history
    assert f"Scarwarden-Episode {emoji.id}" in history
    assert '<span class="del">-- Tags: linkedin, post, announcement, hook, hashtags</span>' in html
    assert '<span class="add">+- Tags: linkedin, post, announcement, emoji, hashtags</span>' in html
    # Above each diff, the same change rule-wise: a word diff, tags and citations.
    assert "Use <del>one</del><ins>no</ins> emoji<del> at most</del> and put" in html
    assert "<ins>+emoji</ins>" in html and "<del>−hook</del>" in html
    assert '<del>−<a href="/episodes/ep-72r3dswafq">ep-72r3dswafq</a></del>' in html
    # The retired rule says so and links to its replacement; the replacement links back.
    pb04 = text_of(client.get("/rules/pb-04").get_data(as_text=True))
    assert "retired" in pb04 and "replaced by PB-15" in pb04
    assert "Replaces PB-04: Route outage reports" in text_of(
        client.get("/rules/PB-15").get_data(as_text=True)
    )


def test_episode_page_and_rules_citing_it(client, distilled) -> None:  # type: ignore[no-untyped-def]
    html = client.get("/episodes/ep-hkgnqdz88f").get_data(as_text=True)
    page = text_of(html)
    assert "Cited by 1 rule" in page and 'href="/rules/PB-01"' in html
    assert "memory/episodes/2026/08/ep-hkgnqdz88f.yaml" in page
    assert "As stored (YAML)" in page and "corrected_by: maya" in page
    uncited = text_of(client.get("/episodes/ep-72r3dswafq").get_data(as_text=True))
    assert "No rule cites this episode yet." in uncited


def test_untrusted_text_is_escaped_everywhere(client, distilled) -> None:  # type: ignore[no-untyped-def]
    for url in (
        f"/episodes/{distilled.script.id}",
        "/rules/PB-01",
        "/ledger",
        "/ledger?q=changelog",
        f"/task?task={SCRIPT}",
    ):
        r = client.get(url)
        html = r.get_data(as_text=True)
        assert r.status_code == 200, url
        assert SCRIPT not in html and "<b>bold</b>" not in html, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, url
        assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")
        assert "script-src" not in r.headers["Content-Security-Policy"]
    assert "<script" not in client.get("/").get_data(as_text=True)


def test_ledger_browse_and_search(client, distilled) -> None:  # type: ignore[no-untyped-def]
    page = text_of(client.get("/ledger").get_data(as_text=True))
    assert "37 episodes, append-only." in page
    assert "2026-11 9" in page and "writer" in page
    nov = client.get("/ledger?month=2026-11&agent=writer").get_data(as_text=True)
    ids = set(re.findall(r'href="/episodes/(ep-[0-9a-z]+)"', nov))
    november = distilled.repo.episodes_dir / "2026" / "11"
    expected = {p.stem for p in november.glob("*.yaml") if "agent: writer\n" in p.read_text()}
    assert ids == expected and {distilled.emoji.id, distilled.script.id} < ids
    tagged = client.get("/ledger?tag=emoji").get_data(as_text=True)
    assert distilled.emoji.id in tagged and "ep-hkgnqdz88f" not in tagged
    searched = client.get("/ledger?q=childish").get_data(as_text=True)
    assert set(re.findall(r'href="/episodes/(ep-[0-9a-z]+)"', searched)) == {distilled.emoji.id}
    # Each row links to the rules citing the episode.
    assert 'href="/rules/PB-01"' in searched
    assert "No episode matches." in text_of(client.get("/ledger?q=zzzznothing").get_data(as_text=True))


def test_not_found_pages(client) -> None:  # type: ignore[no-untyped-def]
    for url, message in (
        ("/rules/PB-99", "There is no rule PB-99 in the playbook."),
        ("/episodes/ep-nope123", "There is no episode ep-nope123 in the ledger."),
        ("/no/such/page", "Not Found"),
    ):
        r = client.get(url)
        assert r.status_code == 404, url
        assert message in text_of(r.get_data(as_text=True))


def test_task_page_both_sides_without_a_model(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get("/task?task=Draft+a+LinkedIn+post+announcing+our+beta").get_data(as_text=True)
    page = text_of(html)
    assert "Verdict ACT" in page
    assert "Recalled rules" in page and "tag linkedin +" in page
    assert 'href="/rules/PB-01"' in html
    with_memory, without = page.split("With memory", 1)[1].split("Without memory", 1)
    assert "No model is configured: this is the brief an agent would get." in with_memory
    assert "Cite as: [PB-01, learnt in ep-hkgnqdz88f" in with_memory
    assert "Without memory, a model gets only the bare task" in without
    assert "Draft a LinkedIn post announcing our beta" in without
    # Citations in the brief are links to the rule and its episodes.
    assert '[<a href="/rules/PB-01">PB-01</a>, learnt in <a href="/episodes/ep-hkgnqdz88f">' in html
    on_only = text_of(client.get("/task?task=Draft+a+LinkedIn+post&memory=on").get_data(as_text=True))
    assert "With memory" in on_only and "Without memory" not in on_only
    off_only = text_of(client.get("/task?task=Draft+a+LinkedIn+post&memory=off").get_data(as_text=True))
    assert "Without memory" in off_only and "Verdict" not in off_only


def test_task_page_with_a_model_answers_both_sides(fake_llm, distilled) -> None:  # type: ignore[no-untyped-def]
    from fakellm import completion

    # Created after fake_llm set the endpoint and key in the environment.
    client = create_app(distilled.repo.root, csrf_token=TOKEN).test_client()
    fake_llm.script(
        completion(
            "Lead with the reader's pain [PB-01, learnt in ep-hkgnqdz88f] and cite "
            "[PB-77, learnt in ep-hkgnqdz88f]."
        ),
        completion("Announcing our beta! Here are five features."),
    )
    html = client.get("/task?task=Draft+a+LinkedIn+post+announcing+our+beta").get_data(as_text=True)
    page = text_of(html)
    with_memory, without = page.split("With memory", 1)[1].split("Without memory", 1)
    assert "Lead with the reader's pain [PB-01, learnt in ep-hkgnqdz88f]" in with_memory
    assert "Citations checked by code:" in with_memory and "invented" in with_memory
    assert "Announcing our beta! Here are five features." in without
    assert "PB-01" not in str(fake_llm.requests[1]["body"]["messages"])


def test_task_page_says_what_the_screen_replaced(fake_llm, distilled) -> None:  # type: ignore[no-untyped-def]
    """The screen's warning was only in the server's log: the page says it in one line,
    the kinds, never the value."""
    from fake_secrets import ALNUM, draw
    from fakellm import completion

    token = "gh" + "p_" + draw(ALNUM, 36)
    client = create_app(distilled.repo.root, csrf_token=TOKEN).test_client()
    fake_llm.default = completion("Announcing our beta!")
    task = f"Draft a LinkedIn post announcing our beta, token {token}, card 4111 1111 1111 1111"
    page = text_of(client.get("/task", query_string={"task": task}).get_data(as_text=True))
    assert token not in str(fake_llm.requests)
    assert "github-token replaced by a placeholder" in page and "card (privacy: warn)" in page
    assert page.count(token) == page.count(task)  # the task box and its echo only: no warning quotes it
    clean = client.get("/task?task=Draft+a+LinkedIn+post+announcing+our+beta").get_data(as_text=True)
    assert "placeholder" not in text_of(clean)


def test_task_page_with_a_failing_model_recalls_once(fake_llm, distilled) -> None:  # type: ignore[no-untyped-def]
    from scarwarden.index import open_index
    from scarwarden.recall.log import read_log

    client = create_app(distilled.repo.root, csrf_token=TOKEN).test_client()
    fake_llm.script((401, {"error": {"message": "Incorrect API key provided"}}))
    with open_index(distilled.repo) as index:
        before = len(read_log(index, limit=None))
    # issue 28: loading the page (a GET) writes nothing to the recall log
    html = client.get("/task?task=Draft+a+LinkedIn+post+announcing+our+beta").get_data(as_text=True)
    assert "The model failed: this is the brief an agent would get." in text_of(html)
    with open_index(distilled.repo) as index:
        assert len(read_log(index, limit=None)) == before
    # the form's explicit "Recall and answer" (a POST) is logged, once
    fake_llm.script((401, {"error": {"message": "Incorrect API key provided"}}))
    form = {"csrf_token": TOKEN, "task": "Draft a LinkedIn post announcing our beta", "memory": "both"}
    html = client.post("/task", data=form).get_data(as_text=True)
    assert "The model failed: this is the brief an agent would get." in text_of(html)
    with open_index(distilled.repo) as index:
        log = read_log(index, limit=None)
    assert len(log) == before + 1 and log[0].task == "Draft a LinkedIn post announcing our beta"
    assert len(fake_llm.requests) == 2  # one per request: the POST recalled once
    refused = client.post("/task", data={**form, "csrf_token": "wrong"})
    assert refused.status_code == 403
    with open_index(distilled.repo) as index:
        assert len(read_log(index, limit=None)) == before + 1


def test_ask_human_answer_is_recorded_as_a_commit(client, distilled) -> None:  # type: ignore[no-untyped-def]
    html = client.get(f"/task?task={ASK_TASK}").get_data(as_text=True)
    assert "Verdict ASK_HUMAN" in text_of(html)
    assert f'name="csrf_token" value="{TOKEN}"' in html and 'action="/answer"' in html
    answer = "Use the agency portal, keep it under 4000 EUR, and <b>confirm</b> by email"
    r = client.post(
        "/answer",
        data={"csrf_token": TOKEN, "task": ASK_TASK, "answer": answer},
        headers={"Origin": "http://localhost"},
    )
    assert r.status_code == 303
    ep_id = r.headers["Location"].split("/episodes/")[1].split("?")[0]
    page = client.get(r.headers["Location"]).get_data(as_text=True)
    assert f"Recorded and committed as {ep_id}." in text_of(page)
    assert "&lt;b&gt;confirm&lt;/b&gt;" in page and "<b>confirm</b>" not in page
    log = git(distilled.repo.root, "log", "-1", "--format=%B").stdout
    assert f"Scarwarden-Episode: {ep_id}" in log
    assert git(distilled.repo.root, "status", "--porcelain").stdout == ""


def test_cross_site_posts_are_refused(client, distilled) -> None:  # type: ignore[no-untyped-def]
    before = git(distilled.repo.root, "rev-parse", "HEAD").stdout
    form = {"csrf_token": TOKEN, "task": ASK_TASK, "answer": "x"}
    cases = [
        ({k: v for k, v in form.items() if k != "csrf_token"}, {}),
        (form, {"Origin": "http://evil.example"}),
        (form, {"Origin": "null"}),
        (form, {"Referer": "http://evil.example/page"}),
    ]
    for data, headers in cases:
        r = client.post("/answer", data=data, headers=headers)
        assert r.status_code == 403, (data, headers)
        assert "Cross-site request refused" in r.get_data(as_text=True)
    # From this server's own address (a page shown before it restarted): refused, the form again.
    r = client.post("/answer", data={**form, "csrf_token": "wrong"}, headers={"Origin": "http://localhost"})
    assert r.status_code == 403 and "This page is older than the server" in r.get_data(as_text=True)
    assert client.get("/answer").status_code == 405  # writes are POST only
    assert git(distilled.repo.root, "rev-parse", "HEAD").stdout == before


def test_a_bad_answer_is_a_400_and_records_nothing(client, distilled) -> None:  # type: ignore[no-untyped-def]
    before = git(distilled.repo.root, "rev-parse", "HEAD").stdout
    headers = {"Origin": "http://localhost"}
    r = client.post("/answer", data={"csrf_token": TOKEN, "task": ASK_TASK, "answer": "  "}, headers=headers)
    assert r.status_code == 400
    assert "Cannot record this answer" in r.get_data(as_text=True)
    assert "the answer is empty" in r.get_data(as_text=True)
    assert "--answer" not in r.get_data(as_text=True)  # a page has no options: the CLI's hint was shown
    huge = client.post(
        "/answer", data={"csrf_token": TOKEN, "task": ASK_TASK, "answer": "x" * 300_000}, headers=headers
    )
    assert huge.status_code == 413
    assert git(distilled.repo.root, "rev-parse", "HEAD").stdout == before
    assert git(distilled.repo.root, "status", "--porcelain").stdout == ""


def test_foreign_host_header_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    r = client.get("/", headers={"Host": "evil.example"})
    assert r.status_code == 400 and "Unknown host" in r.get_data(as_text=True)
    assert client.get("/", headers={"Host": "127.0.0.1:5054"}).status_code == 200


def test_read_only_mode(distilled: Distilled) -> None:
    client = create_app(distilled.repo.root, read_only=True, csrf_token=TOKEN).test_client()
    html = client.get(f"/task?task={ASK_TASK}").get_data(as_text=True)
    assert "This server is read-only" in html and 'action="/answer"' not in html
    assert "read-only" in text_of(client.get("/").get_data(as_text=True))
    before = git(distilled.repo.root, "rev-parse", "HEAD").stdout
    r = client.post("/answer", data={"csrf_token": TOKEN, "task": ASK_TASK, "answer": "x"})
    assert r.status_code == 403 and "read-only" in r.get_data(as_text=True)
    assert git(distilled.repo.root, "rev-parse", "HEAD").stdout == before


def test_static_export_has_relative_links_that_resolve(
    distilled: Distilled, make_cli, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    result = make_cli(distilled.repo.root)("audit", "--html", str(out), "--json")
    assert result.exit_code == 0, result.output
    # The demo's visual episodes (issue 19) add a rule page and two episode pages, and
    # the two images they attach have a page each.
    assert '"pages": 55' in result.stdout and '"images": 2' in result.stdout
    pages = sorted(out.rglob("*.html"))
    assert len(pages) == 55 + 2 and (out / "static" / "style.css").is_file()
    for page in pages:
        html = page.read_text()
        assert SCRIPT not in html
        for href in hrefs(html):
            assert not href.startswith(("/", "http")), (page, href)
            assert (page.parent / href.split("#")[0]).resolve().is_file(), (page, href)
    rule = text_of((out / "rules" / "PB-01.html").read_text())
    assert f"correction {distilled.emoji.get('correction')}" in rule
    assert "Generated from memory/ at commit" in rule
    assert '<a href="../episodes/ep-hkgnqdz88f.html">' in (out / "rules" / "PB-01.html").read_text()
    assert '<a href="rules/PB-01.html">' in (out / "index.html").read_text()
    assert "&lt;script&gt;" in (out / "episodes" / f"{distilled.script.id}.html").read_text()
    # No live-only parts (search forms, the task page) in a static export.
    assert "<form" not in (out / "index.html").read_text()
    # The same commit exports to the same bytes.
    again = tmp_path / "again"
    make_cli(distilled.repo.root)("audit", "--html", str(again))
    assert (again / "rules" / "PB-01.html").read_bytes() == (out / "rules" / "PB-01.html").read_bytes()


def test_missing_flask_is_a_clear_usage_error(demo_repo: MemoryRepo) -> None:
    code = (
        "import sys; sys.modules['flask'] = None; from scarwarden.cli import main; "
        "main(['-C', sys.argv[1], 'serve'])"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(demo_repo.root)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "error: scarwarden serve needs Flask, which is not installed" in proc.stderr
    # The hint fits how this copy was installed (tests/cli/test_first_hour.py covers each way).
    from scarwarden.cli.commands._install import install_hint

    assert f"hint: {install_hint('ui')}" in proc.stderr


def test_serve_warns_off_loopback_and_serves(demo_repo: MemoryRepo) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scarwarden",
            "-C",
            str(demo_repo.root),
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--read-only",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        second = proc.stderr.readline()
        assert first.startswith("warning: listening on 0.0.0.0, not loopback")
        assert "(read-only)" in second
        port = int(re.search(r"http://0\.0\.0\.0:(\d+)/", second).group(1))  # type: ignore[union-attr]
        assert port != 0  # the port actually bound, not the one asked for
        # Served by waitress, not Flask's development server (issue 18).
        import requests

        reply = requests.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert reply.status_code == 200 and reply.headers["Server"] == "scarwarden"
        assert "PB-01" in reply.text
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_demo_section_tells_how_to_open_the_ui(demo_repo: MemoryRepo) -> None:
    from scarwarden.demo.sections import audit_section as demo_section

    before = demo_repo.playbook_path.read_bytes()
    lines: list[str] = []
    demo_section(demo_repo, lines.append)
    out = "\n".join(lines)
    assert "scarwarden init --demo && scarwarden serve" in out
    assert "http://127.0.0.1:5054/" in out
    assert "  ~ PB-14: Pause scheduled promotions during an incident  (changed)" in out
    assert "on [-all-]{+every+} social [-channels-]{+channel+} and in" in out
    assert "      learnt in: +ep-t3gn9ngxyq" in out
    assert "correction:" in out  # the newly cited episode, quoted
    assert demo_repo.playbook_path.read_bytes() == before


def test_unwrap_reflows_only_where_wrapping_broke_lines() -> None:
    from scarwarden.audit.web.taskpage import unwrap

    text = (
        "First paragraph with enough words in it to need wrapping at a width of forty\n"
        "chars.\n"
        "  Cite as: [PB-01, learnt in ep-aaa]\n"
        "  Matched: tags a\n"
        "Short line.\n"
        "Next line."
    )
    import textwrap

    wrapped = "\n".join(textwrap.wrap(text.split("\n")[0] + " " + text.split("\n")[1], 40))
    assert unwrap(wrapped, width=40) == text.split("\n")[0] + " chars."
    rest = "\n".join(text.split("\n")[2:])
    assert unwrap(rest, width=40) == rest


def test_broken_playbook_is_reported_not_crashed(client, distilled) -> None:  # type: ignore[no-untyped-def]
    distilled.repo.playbook_path.write_text("# Playbook\n\n## PB-01 missing colon\n\ntext\n")
    r = client.get("/")
    assert r.status_code == 500
    page = text_of(r.get_data(as_text=True))
    assert "Cannot show this" in page and "cannot parse heading" in page
    # Episodes do not depend on the playbook: the ledger still works.
    assert client.get("/ledger").status_code == 200


def _ledger_tasks(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>(Paged task \d+|Other task \d+)</td>", html)


def test_ledger_pages_keep_the_filters(memory_repo: MemoryRepo) -> None:
    from scarwarden.files.record import add_episodes

    inputs = [
        {
            "task": f"Paged task {i:03d}",
            "outcome": "fine",
            "agent": "pager-bot",
            "tags": ["paging"],
            "at": f"2026-03-01T{i // 60:02d}:{i % 60:02d}:00Z",
        }
        for i in range(130)
    ]
    inputs += [
        {
            "task": f"Other task {i:03d}",
            "outcome": "fine",
            "agent": "other",
            "tags": ["paging"],
            "at": f"2026-03-02T00:{i:02d}:00Z",
        }
        for i in range(20)
    ]
    add_episodes(memory_repo, inputs)
    client = create_app(memory_repo.root).test_client()

    first = client.get("/ledger?agent=pager-bot&tag=paging").get_data(as_text=True)
    assert _ledger_tasks(first) == [f"Paged task {i:03d}" for i in range(129, 29, -1)]
    assert "Showing 1–100 of 130 (page 1 of 2)" in text_of(first)
    older = [h for h in hrefs(first) if "page=" in h]
    # Escaped as every attribute is; the link keeps both filters.
    assert older == ["/ledger?tag=paging&amp;agent=pager-bot&amp;page=2"] * 2
    assert "Newer" not in text_of(first)

    second = client.get("/ledger?tag=paging&agent=pager-bot&page=2").get_data(as_text=True)
    assert _ledger_tasks(second) == [f"Paged task {i:03d}" for i in range(29, -1, -1)]
    assert "Showing 101–130 of 130 (page 2 of 2)" in text_of(second)
    assert "Older" not in text_of(second)
    assert "/ledger?tag=paging&amp;agent=pager-bot" in hrefs(second)  # newer: page 1

    # Full-text search pages too, and keeps its query in the links.
    searched = client.get("/ledger?q=paged+task").get_data(as_text=True)
    assert "Showing 1–100 of 130" in text_of(searched)
    assert "/ledger?q=paged+task&amp;page=2" in hrefs(searched)

    everything = client.get("/ledger").get_data(as_text=True)
    assert "150 episodes, append-only." in text_of(everything)
    assert _ledger_tasks(everything)[:20] == [f"Other task {i:03d}" for i in range(19, -1, -1)]
    assert "/ledger?page=2" in hrefs(everything)
    # A page past the end shows the last; a page that is no number shows the first.
    past = client.get("/ledger?page=99").get_data(as_text=True)
    assert "Showing 101–150 of 150 (page 2 of 2)" in text_of(past)
    assert _ledger_tasks(past)[-1] == "Paged task 000"
    assert _ledger_tasks(client.get("/ledger?page=x<y").get_data(as_text=True)) == _ledger_tasks(everything)
    # One page: the count line, no pager links.
    few = client.get("/ledger?agent=other").get_data(as_text=True)
    assert "Showing 1–20 of 20" in text_of(few) and "page=" not in few


def test_export_into_an_old_export_removes_only_its_stale_pages(
    distilled: Distilled, make_cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    import json

    from scarwarden.files.record import add_episodes
    from scarwarden.files.scaffold import init as init_memory
    from scarwarden.repo import open_repo

    out = tmp_path / "site"
    first = make_cli(distilled.repo.root)("audit", "--html", str(out), "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["removed"] == 0
    assert (out / "rules" / "PB-01.html").is_file()
    assert (out / "episodes" / "ep-hkgnqdz88f.html").is_file()
    # Files the export did not write, even where it writes, are not its to remove.
    mine = {
        out / "notes.txt": "keep me",
        out / "rules" / "README.html": "<p>about</p>",
        out / "episodes" / "ep-handmade1.html": "<p>written by hand</p>",
        out / "episodes" / "keep.txt": "x",
    }
    for path, content in mine.items():
        path.write_text(content)
    old_pages = (
        len(list((out / "rules").glob("PB-*.html"))) + len(list((out / "episodes").glob("ep-*.html"))) - 1
    ) + len(list((out / "images").glob("*.html")))  # the demo's images: not the other memory's

    # Another memory into the same folder: none of the first one's rules or episodes.
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    init_memory(open_repo(other, initialised=False))
    memory_repo = open_repo(other)
    new = add_episodes(
        memory_repo, [{"task": "Only task one", "outcome": "ok"}, {"task": "Only task two", "outcome": "ok"}]
    )
    second = make_cli(memory_repo.root)("audit", "--html", str(out), "--json")
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["removed"] == old_pages
    assert not list((out / "rules").glob("PB-*.html"))
    assert sorted(p.name for p in (out / "episodes").iterdir()) == sorted(
        [f"{ep.id}.html" for ep in new] + ["ep-handmade1.html", "keep.txt"]
    )
    for path, content in mine.items():
        assert path.read_text() == content
    assert not list((out / "images").iterdir()) and not list((out / "media").iterdir())
    ledger = (out / "ledger.html").read_text()
    assert "ep-hkgnqdz88f" not in ledger and all(ep.id in ledger for ep in new)
    # The same memory again: nothing is stale.
    again = make_cli(memory_repo.root)("audit", "--html", str(out), "--json")
    assert json.loads(again.stdout)["removed"] == 0
    assert (out / "episodes" / f"{new[0].id}.html").is_file()


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("", "--html is empty"),
        ("memory", "inside the memory folder (memory/)"),
        ("memory/site", "inside the memory folder"),
        ("site/../memory/episodes", "inside the memory folder"),
        (".git", "inside the git directory"),
        (".git/site", "inside the git directory"),
        (".scarwarden/site", "inside Scarwarden's state folder"),
    ],
)
def test_static_export_into_the_repository_own_folders_is_refused(
    demo_repo: MemoryRepo, make_cli, chdir, target: str, says: str
) -> None:
    root = demo_repo.root
    chdir(root)  # a relative --html is the cwd's, as the shell's would be
    before = git(root, "status", "--porcelain", "--ignored", "--untracked-files=all").stdout
    result = make_cli(root)("audit", "--html", target)
    assert result.exit_code == 2 and says in result.stderr, result.output
    assert git(root, "status", "--porcelain", "--ignored", "--untracked-files=all").stdout == before
    assert not any((root / name).exists() for name in ("index.html", "rules", "static"))
    assert not (root / ".git" / "index.html").exists() and not (root / ".git" / "site").exists()
