"""The console in a real browser: Debian's Chromium driven by Playwright against a live server.

Screenshots of each page land in test-artifacts/ (not committed).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memory.models import Memory
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests
from memory.text.vectors import embed_for_space
from tenants import scope
from tenants.tenant_admin import create_operator
from tests.conftest import make_space

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
PASSWORD = "a-long-password"
FACTS = ["We run a fleet of four vans.", "We have four delivery vans in Brno.", "Our renewal is in May."]


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the ORM runs beside Playwright's event loop
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        yield browser
        browser.close()


@pytest.fixture
def live_server(transactional_db):
    """A live server for this test only, stopped before the test database is dropped (pytest-django's
    session-wide one outlives the database and keeps a connection to it)."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost:0")
    yield server
    server.stop()


@pytest.fixture
def console_data(tenant_a):
    space = make_space(tenant_a, "acme-customer", display_name="Acme customer")
    with scope.tenant_scope(tenant_a, space):
        vectors = embed_for_space(space.id, FACTS)
        for text, vector in zip(FACTS, vectors, strict=True):
            Memory.objects.create(
                tenant_id=tenant_a.id, space=space, kind="fact", content=text, embedding=vector, importance=0.6,
                keyword_digests=keyword_digests(space.id, search_tokens(text)),
            )  # fmt: skip
    create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    create_operator(tenant=tenant_a, username="sam", password=PASSWORD, role="support")
    return space


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/console/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/console/")


def test_log_in_and_see_the_overview(browser, live_server, console_data):
    page = browser.new_page()
    log_in(page, live_server, "olga")
    assert page.locator("h1").inner_text() == "Overview"
    assert page.locator("svg.chart").count() == 1
    page.screenshot(path=str(ARTIFACTS / "overview.png"), full_page=True)


def test_moving_the_dedup_slider_changes_the_preview(browser, live_server, console_data):
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, live_server, "olga")
    page.goto(f"{live_server.url}/console/spaces/{console_data.external_id}/thresholds/")
    assert page.locator("#merge-count").inner_text() == "0"
    # These facts are paraphrases, not restatements in the same terms: only distance can merge them.
    page.uncheck("input[name=dedup_requires_same_terms]")
    page.fill("#dedup_distance", "0.3")
    # A locator assertion, not wait_for_function: the console's CSP forbids evaluating strings.
    expect(page.locator("#merge-count")).not_to_have_text("0", timeout=15000)
    assert int(page.locator("#merge-count").inner_text()) >= 1
    assert page.locator('line[data-threshold="dedup"]').get_attribute("data-value") == "0.300"
    expect(page.locator("#value-dedup_distance")).to_have_text("0.300")  # the slider's value beside it
    # ...and the built-in pairs in words: at 0.3 even a different business merges.
    furniture = "“We sell garden furniture.”: close enough to merge"
    expect(page.locator("#examples-dedup_distance")).to_contain_text(furniture)
    page.screenshot(path=str(ARTIFACTS / "thresholds.png"), full_page=True)


def test_the_playground_shows_scores_and_the_threshold_split(browser, live_server, console_data):
    page = browser.new_page()
    log_in(page, live_server, "olga")
    page.goto(f"{live_server.url}/console/playground/")
    page.select_option("#space", console_data.external_id)
    page.fill("#message", "How many vans do you have?")
    page.get_by_role("button", name="Run").click()
    page.wait_for_selector("table.candidates tr.pass", timeout=15000)
    assert "We run a fleet of four vans." in page.locator("table.candidates tr.pass").first.inner_text()
    assert page.locator("tr.threshold-line").count() == 1
    assert page.locator("table.candidates tr.fail").count() >= 1
    assert "We run a fleet of four vans." in page.locator("#prompt-block").inner_text()
    assert "tokens" in page.locator("#prompt-budget").inner_text()
    assert "0.0000" not in page.locator("table.candidates").inner_text()
    page.screenshot(path=str(ARTIFACTS / "playground.png"), full_page=True)


def test_an_operator_deletes_a_memory_and_support_finds_it_in_the_audit(browser, live_server, console_data):
    page = browser.new_page()
    log_in(page, live_server, "olga")
    page.goto(f"{live_server.url}/console/spaces/{console_data.external_id}/")
    page.screenshot(path=str(ARTIFACTS / "space.png"), full_page=True)
    row = page.locator("tr", has_text="Our renewal is in May.")
    row.get_by_role("link", name="Delete…").click()
    page.get_by_role("button", name="Delete permanently").click()
    page.wait_for_selector("text=deletion is in the audit")
    assert page.locator("text=Our renewal is in May.").count() == 0
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server, "sam")
    page.goto(f"{live_server.url}/console/deletions/")
    audit_row = page.locator("tbody tr", has_text="operator olga")
    assert audit_row.count() == 1 and console_data.external_id in audit_row.inner_text()
    assert "renewal" not in page.content().lower()
    page.fill("#check-space", console_data.external_id)
    page.fill("#check-text", "Our renewal is in May.")
    page.get_by_role("button", name="Check").click()
    page.wait_for_selector("text=Yes: deleted")
    page.screenshot(path=str(ARTIFACTS / "deletions.png"), full_page=True)


def test_an_admin_on_a_phone_exports_then_erases_a_customer(browser, live_server, console_data, tenant_a):
    create_operator(tenant=tenant_a, username="ada", password=PASSWORD, role="admin")
    page = browser.new_page(viewport={"width": 360, "height": 740})
    log_in(page, live_server, "ada")
    page.goto(f"{live_server.url}/console/spaces/{console_data.external_id}/")
    page.get_by_role("link", name="Export this customer…").click()
    page.fill("#confirm_id", console_data.external_id)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the export").click()
    assert download.value.suggested_filename == f"{console_data.external_id}.jsonl"
    lines = Path(download.value.path()).read_text().splitlines()
    assert json.loads(lines[-1]) == {"type": "end", "records": len(FACTS)}
    assert {json.loads(line)["content"] for line in lines[1:-1]} == set(FACTS)
    page.goto(f"{live_server.url}/console/spaces/{console_data.external_id}/")
    erase = page.get_by_role("link", name="Erase this customer…")
    box = erase.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360
    erase.click()
    fits_the_screen(page, 360, "space-erase")
    page.fill("#confirm_id", "acme")  # not the id: nothing happens
    page.get_by_role("button", name="Erase permanently").click()
    page.wait_for_selector("text=nothing was done")
    page.fill("#confirm_id", console_data.external_id)
    page.get_by_role("button", name="Erase permanently").click()
    page.wait_for_selector(f"text=Space {console_data.external_id} was erased: {len(FACTS)} memories")
    page.screenshot(path=str(ARTIFACTS / "space-erased.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server, "sam")
    page.goto(f"{live_server.url}/console/deletions/")
    assert page.locator("tbody tr", has_text="admin ada").count() == len(FACTS)


def test_adding_a_duplicate_resolution_opens_the_choice_dialog(browser, live_server, tenant_a):
    from playwright.sync_api import expect

    make_space(tenant_a, "agents", kind="shared")
    create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    page = browser.new_page()
    log_in(page, live_server, "olga")
    page.goto(f"{live_server.url}/console/spaces/agents/")
    page.fill("#case-input", "Customer was charged twice for the same order")
    page.fill("#case-comment", "Refund the second charge")
    page.fill("#case-outcome", "refund")
    page.click("#add-case-submit")
    expect(page.locator("text=Stored: created.")).to_be_visible(timeout=15000)
    page.fill("#case-input", "Customer was charged twice for the same order.")
    page.fill("#case-comment", "Apologise and refund")
    page.fill("#case-outcome", "refund")
    page.click("#add-case-submit")
    dialog = page.locator("dialog.duplicates")
    expect(dialog).to_be_visible(timeout=15000)
    assert "Refund the second charge" in dialog.inner_text()
    page.screenshot(path=str(ARTIFACTS / "duplicate-dialog.png"), full_page=True)
    page.click("#dup-merge")
    expect(page.locator("text=Stored: merged.")).to_be_visible(timeout=15000)
    resolutions = page.locator("section", has_text="Escalation resolutions").locator("tbody tr")
    assert resolutions.count() == 1
    assert "Apologise and refund" in resolutions.first.inner_text()


def test_an_account_of_two_tenants_chooses_one_and_switches(browser, live_server, tenant_a, tenant_b):
    make_space(tenant_a, "alice-customer")
    make_space(tenant_b, "bob-customer")
    create_operator(tenant=tenant_a, username="sam", password=PASSWORD, role="operator")
    create_operator(tenant=tenant_b, username="sam", password="", role="support")
    page = browser.new_page()
    page.goto(f"{live_server.url}/console/login/")
    page.fill("#id_username", "sam")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("#choose-tenant")
    page.get_by_label("Bob Bakery").check()
    page.get_by_role("button", name="Continue").click()
    page.wait_for_selector("text=sam · support")
    page.goto(f"{live_server.url}/console/spaces/")
    assert "bob-customer" in page.content() and "alice-customer" not in page.content()
    page.click("#switch-tenant")
    page.get_by_label("Alice Logistics").check()
    page.get_by_role("button", name="Continue").click()
    page.wait_for_selector("text=sam · operator")
    page.goto(f"{live_server.url}/console/spaces/")
    assert "alice-customer" in page.content() and "bob-customer" not in page.content()
    page.screenshot(path=str(ARTIFACTS / "tenant-switcher.png"), full_page=True)


PHONE_WIDTHS = [390, 360]


def fits_the_screen(page, width: int, name: str) -> None:
    """No sideways scrolling of the page (wide tables scroll inside their card) and "Log out" on screen."""
    page.screenshot(path=str(ARTIFACTS / f"{name}-{width}px.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width, name
    log_out = page.get_by_role("button", name="Log out").bounding_box()
    assert log_out is not None and log_out["x"] >= 0 and log_out["x"] + log_out["width"] <= width, name


def test_revoking_a_key_asks_first_naming_the_key(browser, live_server, tenant_a):
    from playwright.sync_api import expect

    from tenants.api_keys import issue_api_key

    issue_api_key(tenant=tenant_a, name="demo key", scopes=["turns"], agent="")
    create_operator(tenant=tenant_a, username="ada", password=PASSWORD, role="admin")
    create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    page = browser.new_page()
    log_in(page, live_server, "ada")
    page.goto(f"{live_server.url}/console/keys/")
    asked = []

    def answer(dialog, accept):
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda d: answer(d, accept=False))
    page.get_by_role("button", name="Revoke demo key").click()
    page.wait_for_timeout(500)
    assert "demo key" in asked[0]
    expect(page.locator("tr", has_text="demo key")).not_to_contain_text("revoked")
    page.once("dialog", lambda d: answer(d, accept=True))
    page.get_by_role("button", name="Revoke demo key").click()
    expect(page.locator("tr", has_text="demo key")).to_contain_text("revoked", timeout=10000)
    page.screenshot(path=str(ARTIFACTS / "api-keys.png"), full_page=True)

    page.goto(f"{live_server.url}/console/members/")
    page.once("dialog", lambda d: answer(d, accept=False))
    page.get_by_role("button", name="Remove olga").click()
    page.wait_for_timeout(500)
    assert "Remove olga (operator)" in asked[-1]
    expect(page.locator("tr", has_text="olga")).to_be_visible()
    assert page.get_by_role("button", name="Remove ada").count() == 0  # no way to lock yourself out
    page.screenshot(path=str(ARTIFACTS / "members.png"), full_page=True)


def test_an_operator_traces_a_memory_to_its_turn_and_edits_it(browser, live_server, tenant_a):
    from playwright.sync_api import expect

    from tenants.api_keys import issue_api_key
    from tests.conftest import api_client

    space = make_space(tenant_a, "acme-customer", display_name="Acme customer")
    agent = api_client(issue_api_key(tenant=tenant_a, name="agent", scopes=["turns"], agent="").secret)
    for number, text in enumerate(FACTS):
        response = agent.post(f"/api/v1/spaces/{space.external_id}/turns?wait=true",
                              {"message": text, "session_id": f"chat-{number}"}, format="json")  # fmt: skip
        assert response.status_code == 201
    create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    page = browser.new_page()
    log_in(page, live_server, "olga")
    page.goto(f"{live_server.url}/console/spaces/{space.external_id}/")
    page.fill("#q", "renewal")
    page.select_option("#kind", "fact")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#memory-count")).to_have_text("1 memory match.")
    row = page.locator("tr.memory", has_text="Our renewal is in May.")
    memory_id = row.locator("code.id").first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "space-filtered.png"), full_page=True)
    row.get_by_role("link", name="the turn that learnt it").click()
    expect(page.locator("#turn-effects")).to_contain_text(memory_id)
    assert page.locator("#turn-message").get_by_text("Text not kept").count() == 1
    page.screenshot(path=str(ARTIFACTS / "turn.png"), full_page=True)
    page.go_back()
    page.locator("tr.memory", has_text="Our renewal is in May.").get_by_role("link", name="Edit…").click()
    page.fill("#content", "Our renewal is in June.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("tr.memory", has_text="Our renewal is in June.")).to_be_visible(timeout=10000)
    assert memory_id in page.locator("tr.memory", has_text="in June").inner_text()
    turn_url = (
        page.locator(f"#memory-{memory_id}").get_by_role("link", name="the turn that learnt it").get_attribute("href")
    )
    page.get_by_role("button", name="Log out").click()

    # Support staff, on a phone: the same ids and provenance, never the text.
    create_operator(tenant=tenant_a, username="sam", password=PASSWORD, role="support")
    phone = browser.new_page(viewport={"width": 390, "height": 800})
    log_in(phone, live_server, "sam")
    phone.goto(f"{live_server.url}/console/spaces/{space.external_id}/")
    assert memory_id in phone.locator("#memory-rows").inner_text()
    fits_the_screen(phone, 390, "space-support")
    phone.goto(live_server.url + turn_url)
    assert memory_id in phone.locator("#turn-effects").inner_text()
    fits_the_screen(phone, 390, "turn-support")
    for text in [*FACTS, "Our renewal is in June."]:
        assert text not in phone.content()


CHART_LABEL_HEIGHTS = """() => [...document.querySelectorAll('svg.chart text')]
    .map(t => t.getBoundingClientRect().height)"""
OVERFLOWING_TABLES = """() => [...document.querySelectorAll('main table')]
    .filter(t => t.getBoundingClientRect().width > t.parentElement.clientWidth + 0.5)
    .map(t => t.id || t.parentElement.id || t.closest('section')?.id || 'a table')"""
ACTIONS = "td.actions a, #memory-rows button, #export-customer, #erase-customer, #recent-turns a"


@pytest.mark.parametrize("width", PHONE_WIDTHS)
def test_the_console_fits_a_phone(browser, live_server, console_data, width):
    from memory.models import DeletionAudit

    with scope.tenant_scope(console_data.tenant_id):
        DeletionAudit.objects.create(
            tenant_id=console_data.tenant_id, space_uuid=console_data.id, space_external_id=console_data.external_id,
            memory_id="6f1c1c54-0000-4000-8000-000000000001", memory_kind="fact", cause="customer_request",
            actor="customer", limits={"forget_floor": 0.06, "max_deletions_per_request": 3}, content_digest="x" * 64,
        )  # fmt: skip
    create_operator(tenant=console_data.tenant, username="ada", password=PASSWORD, role="admin")
    page = browser.new_page(viewport={"width": width, "height": 800})
    log_in(page, live_server, "ada")
    for name, path in [("overview", "/console/"), ("spaces", "/console/spaces/"),
                       ("space", f"/console/spaces/{console_data.external_id}/"),
                       ("deletions", "/console/deletions/"), ("members", "/console/members/"),
                       ("api-keys", "/console/keys/"),
                       ("thresholds", f"/console/spaces/{console_data.external_id}/thresholds/"),
                       ("playground", f"/console/playground/?space={console_data.external_id}&message=vans"),
                       ]:  # fmt: skip
        page.goto(live_server.url + path)
        fits_the_screen(page, width, name)
    for path in ("/console/", f"/console/spaces/{console_data.external_id}/thresholds/"):
        page.goto(live_server.url + path)
        heights = page.evaluate(CHART_LABEL_HEIGHTS)
        assert heights and min(heights) >= 9, (path, heights)  # chart labels readable on the screen's pixels
    page.goto(live_server.url + "/console/deletions/")
    assert "forget_floor: 0.06; max_deletions_per_request: 3" in page.locator("#audit-rows").inner_text()
    assert "6f1c1c54-0000-4000-8000-000000000001" in page.locator("#audit-rows").inner_text()


@pytest.mark.parametrize("width", [360, 1280])
def test_every_action_of_the_space_page_is_on_screen_and_no_table_outgrows_its_card(
    browser, live_server, console_data, width
):
    from memory.models import DeletionAudit

    with scope.tenant_scope(console_data.tenant_id, console_data):
        [older] = [m for m in Memory.objects.filter(space=console_data) if m.content == FACTS[2]]
        newer = Memory.objects.create(
            tenant_id=console_data.tenant_id, space=console_data, kind="fact", content="Our renewal is in June.",
            embedding=older.embedding, importance=0.6, topic="plan",
        )  # fmt: skip
        older.superseded_by = newer
        older.save(update_fields=["superseded_by"])
    create_operator(tenant=console_data.tenant, username="ada", password=PASSWORD, role="admin")
    page = browser.new_page(viewport={"width": width, "height": 800})
    log_in(page, live_server, "ada")
    with scope.tenant_scope(console_data.tenant_id):
        DeletionAudit.objects.create(
            tenant_id=console_data.tenant_id, space_uuid=console_data.id, space_external_id=console_data.external_id,
            memory_id="6f1c1c54-0000-4000-8000-000000000002", memory_kind="fact", cause="customer_request",
            actor="customer", content_digest="x" * 64,
            limits={"forget_floor": 0.06, "max_deletions_per_request": 3, "forget_distance": 0.2},
        )  # fmt: skip
    pages = [("space", f"/console/spaces/{console_data.external_id}/"), ("spaces", "/console/spaces/"),
             ("deletions", "/console/deletions/")]  # fmt: skip
    for name, path in pages:
        page.goto(live_server.url + path)
        fits_the_screen(page, width, f"{name}-actions")
        assert page.evaluate(OVERFLOWING_TABLES) == [], name
    limits = page.locator("td.limits").first
    assert limits.bounding_box()["x"] + limits.bounding_box()["width"] <= width  # the Limits column is not cut
    page.goto(f"{live_server.url}/console/spaces/{console_data.external_id}/")
    actions = page.locator(ACTIONS)
    assert actions.count() >= 2 * len(FACTS) + 3  # Edit and Delete per current memory, Restore, Export, Erase
    for index in range(actions.count()):
        action = actions.nth(index)
        action.scroll_into_view_if_needed()
        box = action.bounding_box()
        label = action.inner_text()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (label, box)


def test_the_audit_filters_dates_with_a_date_picker_and_keeps_a_typed_date_time(browser, live_server, console_data):
    page = browser.new_page()
    log_in(page, live_server, "sam")
    page.goto(f"{live_server.url}/console/deletions/")
    assert page.get_attribute("#since", "type") == "date" and page.get_attribute("#until", "type") == "date"
    page.fill("#since", "2026-11-01")
    page.fill("#until", "2026-12-01")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**since=2026-11-01**")
    assert "until=2026-12-01" in page.url and page.input_value("#since") == "2026-11-01"
    page.goto(f"{live_server.url}/console/deletions/?since=2026-11-01T12:00:00Z")
    assert page.get_attribute("#since", "type") == "text" and page.input_value("#since") == "2026-11-01T12:00:00Z"


def test_support_gets_a_framed_403_and_the_skip_link_works(browser, live_server, console_data):
    page = browser.new_page()
    log_in(page, live_server, "sam")
    response = page.goto(f"{live_server.url}/console/keys/")
    assert response.status == 403
    assert page.locator("h1").inner_text() == "Not allowed"
    assert page.get_by_role("button", name="Log out").is_visible()
    page.screenshot(path=str(ARTIFACTS / "forbidden.png"), full_page=True)
    page.goto(f"{live_server.url}/console/")
    page.keyboard.press("Tab")
    assert page.get_by_role("link", name="Skip to content").is_visible()
    assert page.request.get(f"{live_server.url}/favicon.ico").ok
