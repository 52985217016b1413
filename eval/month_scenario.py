"""A month of conversations: one scripted customer per language over 30 daily sessions, through the API.

The customer moves (twice), grows the team, changes plan, corrects two things it said wrong and
asks to forget two others, between small talk. Every message goes through ``POST …/turns?wait=true``
(forget requests and corrections are handled there, as for any client). After each session, each
attribute known so far is asked through ``POST …/recall`` and the answer compared with the truth at
that time:
- current first: the first statement recalled holds the current value;
- stale returned: a value that is no longer true (moved from, corrected, changed) is among the hits;
- forgotten returned: something the customer asked to forget is recalled;
- wrong deletions: a turn reported deleting anything but the two things the customer asked to forget.
"""

from __future__ import annotations

import datetime

from django.urls import reverse

# Per language: attribute → (query, [(session, value, statement)]); a later entry replaces the value.
# ``wrong`` values are said first and corrected; ``forget`` entries are asked to be forgotten.
SCRIPTS = {
    "en": {
        "attributes": {
            "address": ("Where do I live?", [
                (1, "Leeds", "I live in Leeds, on Park Lane 4."),
                (11, "York", "I moved to York, my new address is Mill Street 12."),
                (23, "Durham", "We moved again, I live in Durham now."),
            ]),
            "team": ("How many people are on my team?", [
                (2, "6", "My team has 6 people."),
                (14, "9", "We hired three more, my team has 9 people now."),
                (26, "11", "My team has 11 people now."),
            ]),
            "plan": ("Which plan am I on?", [
                (3, "Basic", "I'm on the Basic plan."),
                (17, "Premium", "I upgraded to the Premium plan."),
            ]),
            "dog": ("What is my dog called?", [
                (4, "Rex", "My dog is called Rex."),
                (7, "Max", "Sorry, I said that wrong: my dog is called Max, not Rex."),
            ]),
            "floor": ("Which floor is our office on?", [
                (5, "third", "Our office is on the third floor."),
                (9, "fifth", "Correction: our office is on the fifth floor, not the third."),
            ]),
            "car": ("What car do I drive?", [(6, "Skoda", "I drive a red Skoda.")]),
            "bank": ("Which bank do I use?", [(8, "Fio", "I bank with Fio.")]),
        },
        "forget": [
            (12, "phone", "My phone number is 777 123 456.", 19, "Please forget my phone number."),
            (13, "peanuts", "I'm allergic to peanuts.", 27, "Forget what you know about my allergy."),
        ],
        "small_talk": ["Thanks, that helps!", "The weather is lovely today.", "Haha, good one.", "Okay, great."],
    },
    "ru": {
        "attributes": {
            "address": ("Где я живу?", [
                (1, "Казани", "Я живу в Казани, на улице Баумана 5."),
                (11, "Самару", "Я переехал в Самару, мой новый адрес Ленина 7."),
                (23, "Уфе", "Мы снова переехали, теперь я живу в Уфе."),
            ]),
            "team": ("Сколько человек в моей команде?", [
                (2, "6", "В моей команде 6 человек."),
                (14, "9", "Мы наняли ещё троих, теперь в команде 9 человек."),
                (26, "11", "Теперь в моей команде 11 человек."),
            ]),
            "plan": ("Какой у меня тариф?", [
                (3, "Базовый", "У меня тариф Базовый."),
                (17, "Премиум", "Я перешёл на тариф Премиум."),
            ]),
            "dog": ("Как зовут мою собаку?", [
                (4, "Рекс", "Мою собаку зовут Рекс."),
                (7, "Макс", "Извините, я ошибся: мою собаку зовут Макс, а не Рекс."),
            ]),
            "floor": ("На каком этаже наш офис?", [
                (5, "третьем", "Наш офис на третьем этаже."),
                (9, "пятом", "Поправка: наш офис на пятом этаже, а не на третьем."),
            ]),
            "car": ("Какая у меня машина?", [(6, "Шкода", "У меня красная Шкода.")]),
            "bank": ("Каким банком я пользуюсь?", [(8, "Тинькофф", "Я пользуюсь банком Тинькофф.")]),
        },
        "forget": [
            (12, "телефон", "Мой номер телефона 777 123 456.", 19, "Пожалуйста, забудьте мой номер телефона."),
            (13, "арахис", "У меня аллергия на арахис.", 27, "Забудьте, что вы знаете о моей аллергии."),
        ],
        "small_talk": ["Спасибо, это помогло!", "Сегодня отличная погода.", "Ха-ха, смешно.", "Хорошо, отлично."],
    },
}  # fmt: skip
SESSIONS = 30
CORRECTED = ("dog", "floor")  # their first value is wrong and corrected: deleting it is what was asked
FORGOTTEN_MARKS = {"phone": "777", "peanuts": "peanut", "телефон": "777", "арахис": "арахис"}


def _messages_by_session(script: dict) -> dict[int, list[str]]:
    plan: dict[int, list[str]] = {s: [] for s in range(1, SESSIONS + 1)}
    for _query, values in script["attributes"].values():
        for session, _value, statement in values:
            plan[session].append(statement)
    for said_in, _key, statement, forget_in, request in script["forget"]:
        plan[said_in].append(statement)
        plan[forget_in].append(request)
    for session in plan:
        plan[session].insert(0, script["small_talk"][session % len(script["small_talk"])])
    return plan


def _truth(values: list, session: int):
    """(current value, values no longer true) after ``session``; None before the attribute is said."""
    said = [v for v in values if v[0] <= session]
    if not said:
        return None, []
    return said[-1][1], [v[1] for v in said[:-1]]


def run_language(tenant, language: str) -> list[dict]:
    from rest_framework.test import APIClient

    from tenants import scope, spaces
    from tenants.api_keys import issue_api_key

    script = SCRIPTS[language]
    with scope.tenant_scope(tenant):
        space = spaces.create_space(tenant=tenant, external_id=f"month-{language}")
        key = issue_api_key(tenant=tenant, name=f"month {language}", scopes=["turns", "admin"])
    client = APIClient(HTTP_HOST="localhost")  # an allowed host: the settings the service runs with
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key.secret}")
    turn_url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    recall_url = reverse("recall", args=[space.external_id])
    started = datetime.datetime(2026, 3, 1, 9, tzinfo=datetime.UTC)
    plan = _messages_by_session(script)
    results = []
    deleted: list[str] = []  # what the turns reported deleting
    allowed = {FORGOTTEN_MARKS[key_name] for _s, key_name, *_rest in script["forget"]}
    allowed |= {script["attributes"][name][1][0][1].lower() for name in CORRECTED}
    asked = [statement for _s, _k, statement, *_rest in script["forget"]]
    asked += [script["attributes"][name][1][0][2] for name in CORRECTED]
    for session in range(1, SESSIONS + 1):
        at = started + datetime.timedelta(days=session - 1)
        for index, message in enumerate(plan[session]):
            response = client.post(
                turn_url,
                {"message": message, "session_id": f"day-{session:02d}",
                 "at": (at + datetime.timedelta(minutes=index)).isoformat()},
                format="json",
            )  # fmt: skip
            assert response.status_code in (200, 201), response.content
            deleted.extend(d["content"] for d in response.json().get("forgotten", []))
        checks = []
        for attribute, (query, values) in script["attributes"].items():
            current, stale = _truth(values, session)
            if current is None:
                continue
            hits = client.post(recall_url, {"query": query}, format="json").json()["memories"]
            statements = [h["content"] for h in hits if h["kind"] != "topic"]
            first = statements[0].lower() if statements else ""
            checks.append({
                "attribute": attribute, "current_first": current.lower() in first,
                "current_returned": any(current.lower() in s.lower() for s in statements),
                "stale_returned": any(v.lower() in s.lower() and current.lower() not in s.lower()
                                      for v in stale for s in statements),
            })  # fmt: skip
        forgotten_returned = 0
        for _said, key_name, _statement, forget_in, _request in script["forget"]:
            if session >= forget_in:
                hits = client.post(recall_url, {"query": _statement}, format="json").json()["memories"]
                forgotten_returned += any(FORGOTTEN_MARKS[key_name] in h["content"].lower() for h in hits)
        # A deletion is wrong when it removed anything but what the customer asked to forget or corrected
        # (a superseded or merged statement is not a deletion: it stays as history or as a mention).
        # A topic row named after the forgotten statement ("phone") goes with it.
        wrong_deletions = sum(
            not any(mark in content.lower() for mark in allowed)
            and not any(content.lower() in statement.lower() for statement in asked)
            for content in deleted
        )
        results.append({"language": language, "session": session, "checks": checks,
                        "forgotten_returned": forgotten_returned, "wrong_deletions": wrong_deletions,
                        "deleted": list(deleted)})  # fmt: skip
    return results


def run(tenant) -> dict:
    return {language: run_language(tenant, language) for language in SCRIPTS}


def report_lines(result: dict) -> list[str]:
    from eval.report_sections import pct

    lines = [
        "## A month of conversations",
        "",
        "One scripted customer per language (eval/month_scenario.py) over 30 daily sessions through the API: two "
        "moves, a growing team, a plan change, two corrections of something said wrong, two forget requests, small "
        "talk. After each session every attribute known so far is recalled and compared with the truth at that "
        "time. Current first: the first statement recalled holds the current value; stale: a value no longer true "
        "is among the hits; forgotten: a forgotten item is recalled; wrong deletions: what the turns reported "
        "deleting besides the two things asked to be forgotten and the two wrong values corrected (cumulative).",
        "",
        "| Language | Sessions | Checks | Current first | Current among hits | Stale returned | "
        "Forgotten returned (checks) | Wrong deletions (end) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for language, sessions in result.items():
        checks = [c for s in sessions for c in s["checks"]]
        forgotten = sum(s["forgotten_returned"] for s in sessions)
        lines.append(
            f"| {language} | {len(sessions)} | {len(checks)} | "
            f"{pct(sum(c['current_first'] for c in checks) / len(checks))} | "
            f"{pct(sum(c['current_returned'] for c in checks) / len(checks))} | "
            f"{pct(sum(c['stale_returned'] for c in checks) / len(checks))} | {forgotten} | "
            f"{sessions[-1]['wrong_deletions']} |"
        )
    lines += ["", "Per attribute (all sessions after it is first said):", ""]
    lines += ["| Language | Attribute | Checks | Current first | Stale returned |", "| --- | --- | --- | --- | --- |"]
    for language, sessions in result.items():
        attributes = sorted({c["attribute"] for s in sessions for c in s["checks"]})
        for attribute in attributes:
            checks = [c for s in sessions for c in s["checks"] if c["attribute"] == attribute]
            lines.append(
                f"| {language} | {attribute} | {len(checks)} | "
                f"{pct(sum(c['current_first'] for c in checks) / len(checks))} | "
                f"{pct(sum(c['stale_returned'] for c in checks) / len(checks))} |"
            )
    lines += ["", "What the turns deleted (allowed: the two forgotten items and the two corrected values):", ""]
    for language, sessions in result.items():
        lines += [f"- {language}: " + ("; ".join(f"“{c}”" for c in sessions[-1]["deleted"]) or "nothing")]
    lines.append("")
    return lines
