"""The recall log page, the undistilled page (dry-run preview, commit button), the task
page's "why this verdict", invented rules shown inline, tag counts that do not wrap."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from conftest import git, head

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")
from scarwarden.audit.web.app import create_app  # noqa: E402

TOKEN = "test-csrf-token"
ORIGIN = {"Origin": "http://localhost"}


def _client(repo: MemoryRepo, **kwargs: Any) -> Any:
    app = create_app(repo.root, csrf_token=TOKEN, allowed_hosts={"localhost", "127.0.0.1"}, **kwargs)
    return app.test_client()


def test_recall_log_page_lists_and_filters(cli: Any, demo_repo: MemoryRepo) -> None:
    cli("recall", "Draft a LinkedIn post announcing our beta")
    cli("recall", "Book travel for the Berlin conference")
    client = _client(demo_repo)
    page = client.get("/log").get_data(as_text=True)
    assert "Draft a LinkedIn post announcing our beta" in page and "Book travel" in page
    assert '<a href="/rules/PB-01">PB-01</a>' in page
    only_ask = client.get("/log?verdict=ASK_HUMAN").get_data(as_text=True)
    assert "Book travel" in only_ask and "LinkedIn" not in only_ask
    future = client.get("/log?since=2999-01-01").get_data(as_text=True)
    assert "No recall matches." in future
    bad = client.get("/log?since=yesterday-ish")
    assert bad.status_code == 200 and 'class="error"' in bad.get_data(as_text=True)


def test_undistilled_page_previews_and_commits(cli: Any, demo_repo: MemoryRepo) -> None:
    made = cli(
        "episode", "add", "--task", "Reply to the refund ticket", "--outcome", "Refunded in 2 days",
        "--correction", "Always confirm the refund by email", "--tag", "refund", "--json",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    client = _client(demo_repo)
    before = head(demo_repo)
    page = client.get("/distill").get_data(as_text=True)
    assert "Reply to the refund ticket" in page and "Preview: what distilling them changes" in page
    assert f'name="head" value="{before}"' in page and 'action="/distill"' in page
    assert 'name="preview" value="offline"' in page  # the form names what it previewed
    assert head(demo_repo) == before  # the preview wrote nothing
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    # The answer form's protections: token, origin, the commit the preview was made at.
    for data, headers in [
        ({"csrf_token": "wrong", "head": before}, ORIGIN),
        ({"csrf_token": TOKEN, "head": before}, {"Origin": "http://evil.example"}),
    ]:
        assert client.post("/distill", data=data, headers=headers).status_code == 403
    earlier = git(demo_repo.root, "rev-parse", "HEAD~1").stdout.strip()
    stale = client.post("/distill", data={"csrf_token": TOKEN, "head": earlier}, headers=ORIGIN)
    assert stale.status_code == 409 and "nothing was committed" in stale.get_data(as_text=True)
    assert head(demo_repo) == before
    done = client.post(
        "/distill", data={"csrf_token": TOKEN, "head": before, "preview": "offline"}, headers=ORIGIN
    )
    assert done.status_code == 303
    assert head(demo_repo) != before
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout.startswith("distill:")
    after = client.get(done.headers["Location"]).get_data(as_text=True)
    assert "Every episode in the ledger has been distilled." in after


def test_undistilled_page_is_read_only_with_read_only(demo_repo: MemoryRepo, cli: Any) -> None:
    cli("episode", "add", "--task", "Reply to the refund ticket", "--outcome", "Refunded")
    client = _client(demo_repo, read_only=True)
    page = client.get("/distill").get_data(as_text=True)
    assert 'action="/distill"' not in page and "This server is read-only" in page
    before = head(demo_repo)
    r = client.post("/distill", data={"csrf_token": TOKEN, "head": before}, headers=ORIGIN)
    assert r.status_code == 403 and head(demo_repo) == before


def test_task_page_says_why_in_recall_explains_words(demo_repo: MemoryRepo) -> None:
    from scarwarden.recall.engine import recall_task
    from scarwarden.recall.explain import explain_data

    task = "Draft a LinkedIn post announcing our beta"
    reason = explain_data(recall_task(demo_repo, task))["router"]["reason"]
    page = _client(demo_repo).get(f"/task?task={task}").get_data(as_text=True)
    assert 'id="why"' in page
    from markupsafe import escape

    assert str(escape(reason)) in page
    assert "Confidence" in page


def test_a_rule_the_answer_invented_is_shown_as_not_in_the_playbook(demo_repo: MemoryRepo) -> None:
    from scarwarden.audit.web.render import Links, linkify

    html = str(linkify("Follow [PB-01] and [PB-77].", Links(), known={"PB-01"}))
    assert '<a href="/rules/PB-01">PB-01</a>' in html
    assert '<a href="/rules/PB-77">' not in html
    assert '<span class="missing-rule" title="not in the playbook">PB-77</span>' in html
    assert "(not in the playbook)" in html


def test_tag_counts_stay_with_their_tag(demo_repo: MemoryRepo) -> None:
    client = _client(demo_repo)
    for url in ("/", "/ledger"):
        page = client.get(url).get_data(as_text=True)
        assert '<span class="facet">' in page and '<span class="count">' in page
    css = client.get("/static/style.css").get_data(as_text=True)
    assert ".facet { white-space: nowrap; }" in css


def test_act_and_flag_offers_confirm_recorded_as_an_episode(demo_repo: MemoryRepo) -> None:
    task = "Answer the outage ticket"
    client = _client(demo_repo)
    page = client.get(f"/task?task={task}").get_data(as_text=True)
    assert "ACT_AND_FLAG" in page and 'action="/confirm"' in page
    rule_id = page.split('name="rule_id" value="')[1].split('"')[0]
    before = head(demo_repo)
    wrong = client.post(
        "/confirm", data={"csrf_token": "x", "task": task, "rule_id": rule_id}, headers=ORIGIN
    )
    assert wrong.status_code == 403 and head(demo_repo) == before
    done = client.post(
        "/confirm", data={"csrf_token": TOKEN, "task": task, "rule_id": rule_id}, headers=ORIGIN
    )
    assert done.status_code == 303
    ep_id = done.headers["Location"].split("/episodes/")[1].split("?")[0]
    shown = client.get(done.headers["Location"]).get_data(as_text=True)
    assert f"Yes: {rule_id}" in shown and "applies to this task" in shown
    assert f"Scarwarden-Episode: {ep_id}" in git(demo_repo.root, "log", "-1", "--format=%B").stdout
    ro = _client(demo_repo, read_only=True).get(f"/task?task={task}").get_data(as_text=True)
    assert 'action="/confirm"' not in ro


def test_a_distill_post_naming_no_commit_says_so(cli: Any, demo_repo: MemoryRepo) -> None:
    """A POST /distill without the form's ``head`` field (a script, a hand-made form) was
    answered 409 "Memory changed since the preview ... The repository moved on", which
    it had not. It is a 400 saying the form named no commit; nothing is committed."""
    made = cli("episode", "add", "--task", "Reply to the refund ticket", "--outcome", "Refunded", "--json")
    assert made.exit_code == 0, made.output
    before = head(demo_repo)
    client = _client(demo_repo)
    for data in (
        {"csrf_token": TOKEN, "preview": "offline"},
        {"csrf_token": TOKEN, "head": "", "preview": "offline"},
    ):
        reply = client.post("/distill", data=data, headers=ORIGIN)
        text = reply.get_data(as_text=True)
        assert reply.status_code == 400, reply.status_code
        assert "The form named no commit" in text and "moved on" not in text
    assert head(demo_repo) == before


def test_a_distill_post_naming_a_malformed_commit_is_a_bad_request(cli: Any, demo_repo: MemoryRepo) -> None:
    """A POST /distill whose ``head`` is not a commit ID (garbage, a NUL, a short or
    upper-case hash, a ref name, a well-formed hash of no commit here) was answered 409
    "Memory changed since the preview", sending the user to redo a preview that was
    fine. It is a 400 naming the field and what it must be; only a real commit other
    than HEAD is "memory changed". Nothing is committed either way."""
    made = cli("episode", "add", "--task", "Reply to the refund ticket", "--outcome", "Refunded", "--json")
    assert made.exit_code == 0, made.output
    before = head(demo_repo)
    client = _client(demo_repo)
    garbage = ("zzz", "\x00", before.upper(), before[:12], f" {before}", "HEAD", "main", "f" * 40, "0" * 64)
    for sent in garbage:
        form = {"csrf_token": TOKEN, "head": sent, "preview": "offline"}
        reply = client.post("/distill", data=form, headers=ORIGIN)
        text = reply.get_data(as_text=True)
        assert reply.status_code == 400, (sent, reply.status_code)
        assert "The form&#39;s &#39;head&#39;" in text and "nothing was committed" in text, (sent, text)
        assert "moved on" not in text, sent
    earlier = git(demo_repo.root, "rev-parse", "HEAD~1").stdout.strip()
    form = {"csrf_token": TOKEN, "head": earlier, "preview": "offline"}
    stale = client.post("/distill", data=form, headers=ORIGIN)
    assert stale.status_code == 409 and "moved on" in stale.get_data(as_text=True)
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def _hint(html: str) -> str:
    found = re.search(r'<p class="muted">(.*?)</p>', html.split('class="error"', 1)[1], re.S)
    return unescape(found.group(1)) if found else ""


def test_a_refused_confirmation_says_what_to_do_on_the_page(cli: Any, demo_repo: MemoryRepo) -> None:
    """A candidate's Confirm button refused (the rule retired or gone since the page was
    shown, or no longer among what recall shows) hinted in the CLI's words: "(scarwarden
    recall TASK)", "answer instead (scarwarden ask TASK --answer ...)", "by its ID (e.g.
    PB-03)" to a page where nobody types a command or an ID. The page says what to do on
    it; the CLI's words are unchanged; nothing is recorded."""
    from helpers import retire_rule

    dinner = "Book a table for the team dinner"
    client = _client(demo_repo)
    page = client.get("/task", query_string={"task": dinner}).get_data(as_text=True)
    assert 'name="rule_id" value="PB-06"' in page and 'name="candidate"' in page
    retire_rule(demo_repo, "PB-06")  # someone else committed while the page was open
    before = head(demo_repo)
    for rule_id, said in [
        ("PB-06", "PB-06 is retired"),
        ("PB-99", "no rule PB-99"),
        ("PB-01", "PB-01 is not among the rules recall shows"),
        ("zz", "is not a rule ID"),
    ]:
        form = {"csrf_token": TOKEN, "task": dinner, "rule_id": rule_id, "candidate": "1"}
        reply = client.post("/confirm", data=form, headers=ORIGIN)
        text = unescape(reply.get_data(as_text=True))
        assert reply.status_code == 400 and said in text, (rule_id, text)
        hint = _hint(reply.get_data(as_text=True))
        assert "scarwarden" not in hint and "--" not in hint and "task page" in hint, (rule_id, hint)
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    unknown = cli("ask", dinner, "--confirm", "PB-99")  # the CLI's words, as they were
    assert "hint: confirm one of the candidates recall listed (scarwarden recall TASK)" in unknown.stderr
    unshown = cli("ask", dinner, "--confirm", "PB-01")
    assert (
        "hint: confirm a rule 'scarwarden recall TASK' lists; to teach something new, answer instead "
        "(scarwarden ask TASK --answer ...)" in unshown.stderr
    ), unshown.stderr


def test_a_rule_recall_does_not_return_is_not_confirmed(demo_repo: MemoryRepo) -> None:
    """The ACT_AND_FLAG form ("Confirm PB-.. applies") recorded "Yes: PB-01 applies to
    this task" for any active rule its hidden field named, one recall never returned
    for the task included (a forged or stale form): an episode tying the task to a rule
    nothing showed, which ``ask --confirm``, the API and the candidate button refuse.
    It is a 400 naming the rules recall returns; nothing is recorded."""
    client = _client(demo_repo)
    before = head(demo_repo)
    for task, rule_id, listed in [
        ("Book travel to Berlin", "PB-01", "it returns no rule"),  # ASK_HUMAN: nothing returned
        ("Answer the outage ticket", "PB-01", "it returns PB-"),
    ]:
        form = {"csrf_token": TOKEN, "task": task, "rule_id": rule_id}
        reply = client.post("/confirm", data=form, headers=ORIGIN)
        text = unescape(reply.get_data(as_text=True))
        assert reply.status_code == 400, (task, reply.status_code)
        assert f"{rule_id} is not among the rules recall returns for this task ({listed}" in text, text
        assert "nothing was recorded" in text and "task page" in _hint(reply.get_data(as_text=True))
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_a_weak_matchs_confirmation_of_no_active_rule_says_what_to_do(demo_repo: MemoryRepo) -> None:
    """The ACT_AND_FLAG form naming no rule, a rule not in the playbook, or one retired
    since the page was shown got "There is no active rule  to confirm." (the ID blank
    when none was sent), and no word on what to do. It now says what is wrong with the
    rule, as the candidate button does, and to recall the task again on the task page."""
    from helpers import retire_rule

    task = "Answer the outage ticket"
    client = _client(demo_repo)
    page = client.get("/task", query_string={"task": task}).get_data(as_text=True)
    assert 'name="rule_id" value="PB-04"' in page and "ACT_AND_FLAG" in page
    retire_rule(demo_repo, "PB-04")  # someone else retired it while the page was open
    before = head(demo_repo)
    for rule_id, said in [
        (None, "is not a rule ID"),
        ("", "is not a rule ID"),
        ("PB-99", "no rule PB-99 in memory/playbook.md"),
        ("PB-04", "PB-04 is retired"),
    ]:
        form = {"csrf_token": TOKEN, "task": task, **({} if rule_id is None else {"rule_id": rule_id})}
        reply = client.post("/confirm", data=form, headers=ORIGIN)
        text = unescape(reply.get_data(as_text=True))
        assert reply.status_code == 400 and said in text and "Cannot record this" in text, (rule_id, text)
        assert "task page" in _hint(reply.get_data(as_text=True)), rule_id
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_a_receipt_the_page_cannot_resolve_is_hinted_in_the_pages_words(demo_repo: MemoryRepo) -> None:
    """The answer and confirm forms carry the receipt of the recall the task page logged;
    one not in the recall log (the index deleted since, a stale or hand-made form), or
    not a receipt, was refused with the CLI's hint: "pass the receipt object recall
    printed (scarwarden recall --json), or a file holding it". The page says what to do
    on it; nothing is recorded."""
    client = _client(demo_repo)
    before = head(demo_repo)
    for path, form in [
        ("/answer", {"task": "Book travel to Berlin", "answer": "Use the portal"}),
        ("/confirm", {"task": "Answer the outage ticket", "rule_id": "PB-04"}),
    ]:
        for receipt, said in [
            ("a" * 16, "no recall with receipt aaaaaaaaaaaaaaaa"),
            ("[1]", "must be a mapping"),
        ]:
            data = {"csrf_token": TOKEN, **form, "receipt": receipt}
            reply = client.post(path, data=data, headers=ORIGIN)
            text = unescape(reply.get_data(as_text=True))
            assert reply.status_code == 400 and said in text, (path, receipt, text)
            hint = _hint(reply.get_data(as_text=True))
            assert "scarwarden" not in hint and "task page" in hint, (path, receipt, hint)
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_the_undistilled_page_says_committed_only_for_a_real_commit(demo_repo: MemoryRepo) -> None:
    """The page after a distillation's commit is /distill?committed=COMMIT; any link
    with ?committed=<anything> made the page say "Distilled and committed as <anything>"
    (nothing was), and ?committed=<the first commit> that a commit no distillation made
    was distilled. Only the page the distill form's commit redirects to says so."""
    client = _client(demo_repo)
    for forged in ("zzz", "f" * 40, "<b>x</b>"):
        page = client.get("/distill", query_string={"committed": forged}).get_data(as_text=True)
        assert "Distilled and committed" not in page, forged
    # Nor a real commit (the memory's first, no distillation), nor nothing at all: only
    # the page a commit of this server's distill form sends its user to says it.
    for forged in (head(demo_repo), ""):
        page = client.get("/distill", query_string={"committed": forged}).get_data(as_text=True)
        assert "Distilled and committed" not in page and "Distilled:" not in page, forged
    ep = client.post(
        "/answer",
        data={"csrf_token": TOKEN, "task": "Book a flight", "answer": "Via the portal"},
        headers=ORIGIN,
    )
    assert ep.status_code == 303
    done = client.post(
        "/distill", data={"csrf_token": TOKEN, "head": head(demo_repo), "preview": "offline"}, headers=ORIGIN
    )
    assert done.status_code == 303
    page = client.get(done.headers["Location"]).get_data(as_text=True)
    assert "Distilled and committed as" in page


def test_an_episode_is_said_recorded_only_when_the_form_recorded_it(demo_repo: MemoryRepo) -> None:
    """/episodes/<id>?recorded=1 said "Recorded and committed as <id>" for any episode in
    the ledger, whoever recorded it and whenever (a link anyone can make). Only the page
    a form's POST sent its user to says so: the redirect is signed by this server."""
    client = _client(demo_repo)
    some = git(demo_repo.root, "ls-files", "memory/episodes").stdout.split()[0].rsplit("/", 1)[1][:-5]
    for forged in ("1", "yes", "0" * 16):
        page = client.get(f"/episodes/{some}", query_string={"recorded": forged})
        assert page.status_code == 200 and "Recorded and committed" not in page.get_data(as_text=True), forged
    form = {"csrf_token": TOKEN, "task": "Book travel to Berlin", "answer": "Use the portal"}
    done = client.post("/answer", data=form, headers=ORIGIN)
    assert done.status_code == 303
    ep_id = done.headers["Location"].split("/episodes/")[1].split("?")[0]
    assert f"Recorded and committed as {ep_id}." in client.get(done.headers["Location"]).get_data(
        as_text=True
    )
    signed = done.headers["Location"].split("?")[1]
    other = client.get(f"/episodes/{some}?{signed}").get_data(as_text=True)  # another's signature
    assert "Recorded and committed" not in other
    restarted = create_app(demo_repo.root, csrf_token="another-server").test_client()
    assert "Recorded and committed" not in restarted.get(done.headers["Location"]).get_data(as_text=True)


def test_a_memory_mode_the_task_page_cannot_read_is_said(demo_repo: MemoryRepo) -> None:
    """A forged ``memory`` (anything but both, on or off) silently fell back to "both";
    it is said on the page, as the other filters are, and not applied."""
    client = _client(demo_repo)
    task = "Draft a LinkedIn post announcing our beta"
    for reply in [
        client.get("/task", query_string={"task": task, "memory": "sideways<b>"}),
        client.post(
            "/task", data={"csrf_token": TOKEN, "task": task, "memory": "sideways<b>"}, headers=ORIGIN
        ),
    ]:
        page = unescape(reply.get_data(as_text=True))
        assert reply.status_code == 200
        assert "unknown memory mode 'sideways<b>' (use both, on or off)" in page, page
        assert "With memory" in page and "Without memory" in page  # the default, said
    for mode in ("both", "on", "off", "ON", ""):
        page = client.get("/task", query_string={"task": task, "memory": mode}).get_data(as_text=True)
        assert "unknown memory mode" not in page, mode


def test_a_task_holding_a_control_character_is_hinted_in_the_pages_words(demo_repo: MemoryRepo) -> None:
    """A task holding a control character (a pasted ESC, a NUL, a lone carriage return),
    on the task page (GET and its form's POST) and the candidate Confirm button, was
    refused with recall's CLI hint "convert it with dos2unix first"; the page says to
    remove it from the task and submit again, nothing logged or recorded."""
    client = _client(demo_repo)
    before = head(demo_repo)
    log_before = client.get("/log").get_data(as_text=True).count("<tr")
    for bad in ("Book\x1b travel to Berlin", "Book travel\r to Berlin", "Book \x00 travel"):
        for reply in [
            client.get("/task", query_string={"task": bad}),
            client.post("/task", data={"csrf_token": TOKEN, "task": bad}, headers=ORIGIN),
            client.post(
                "/confirm",
                data={"csrf_token": TOKEN, "task": bad, "rule_id": "PB-01", "candidate": "1"},
                headers=ORIGIN,
            ),
        ]:
            html = reply.get_data(as_text=True)
            assert reply.status_code == 400 and "only tab and newline are allowed" in unescape(html), html
            hint = _hint(html)
            assert "dos2unix" not in hint and (
                "remove it from the task" in hint or "out of the task" in hint
            ), hint
    assert head(demo_repo) == before
    assert client.get("/log").get_data(as_text=True).count("<tr") == log_before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    # Another refusal of the same form keeps its own hint: the rule's, not the task's.
    reply = client.post(
        "/confirm",
        data={"csrf_token": TOKEN, "task": "Book\x1b travel", "rule_id": "nonsense", "candidate": "1"},
        headers=ORIGIN,
    )
    assert reply.status_code == 400 and "Confirm button" in _hint(reply.get_data(as_text=True))


def test_a_refused_task_is_shown_again_in_its_form(demo_repo: MemoryRepo) -> None:
    """A task the page refuses (a control character pasted with it) sent the user to an
    error page, and the task typed was lost, with the hint to remove the character 'from
    the task and submit again'; the 400 is now the task page, the refusal above its form
    holding the task, escaped, less the invisible characters (said); nothing logged.
    Sent again as shown, it is recalled."""
    client = _client(demo_repo)
    log_before = client.get("/log").get_data(as_text=True).count("<tr")
    for bad in ("Book <b>travel</b>\x1b[31m to Berlin", "Book travel\r to Berlin\x00"):
        for reply in [
            client.get("/task", query_string={"task": bad}),
            client.post("/task", data={"csrf_token": TOKEN, "task": bad}, headers=ORIGIN),
        ]:
            html = reply.get_data(as_text=True)
            assert reply.status_code == 400 and "only tab and newline are allowed" in unescape(html), html
            assert "<b>" not in html and "\x1b" not in html and "\x00" not in html
            form = html.split('<form class="task"')[1].split("</form>")[0]
            assert f'value="{TOKEN}"' in form
            typed = re.search(r'<textarea id="task" name="task"[^>]*>(.*?)</textarea>', form, re.S)
            kept = bad.replace("\x1b", "").replace("\x00", "").replace("\r", "")
            assert typed and unescape(typed.group(1)).strip() == kept, form
            assert "taken out" in unescape(html)
    assert client.get("/log").get_data(as_text=True).count("<tr") == log_before
    shown = client.post("/task", data={"csrf_token": TOKEN, "task": "Book <b>travel</b>[31m to Berlin"},
                        headers=ORIGIN)  # fmt: skip
    assert shown.status_code == 200 and "Verdict" in shown.get_data(as_text=True)


def test_a_task_from_a_page_older_than_the_server_is_shown_again(demo_repo: MemoryRepo) -> None:
    """A task typed on a page shown before the server restarted (its token the old
    process's) was refused 403 'Cross-site request refused' and the task was lost; from
    this server's own address it is the task page again, the task in its form with this
    server's token, nothing recalled or logged. From another site it is refused as
    before, the text not echoed."""
    client = _client(demo_repo)
    log_before = client.get("/log").get_data(as_text=True).count("<tr")
    form = {"csrf_token": "the-old-servers-token", "task": "Book <b>travel</b> to Lisbon"}
    reply = client.post("/task", data=form, headers=ORIGIN)
    html = reply.get_data(as_text=True)
    assert reply.status_code == 403 and "older than the server" in unescape(html), html
    shown = html.split('<form class="task"')[1].split("</form>")[0]
    assert f'value="{TOKEN}"' in shown and "Book &lt;b&gt;travel&lt;/b&gt; to Lisbon</textarea>" in shown
    assert "Verdict" not in html
    evil = client.post("/task", data=form, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403 and "Lisbon" not in evil.get_data(as_text=True)
    assert client.get("/log").get_data(as_text=True).count("<tr") == log_before
