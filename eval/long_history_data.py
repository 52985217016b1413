"""A long-conversation set, generated: customers chatting casually over many dated sessions.

Each customer has a profile (city, job, team size, pet, partner, hobbies …) whose values come out
over the sessions in several wordings, some of them tucked into small talk; some values change
(a move, a new job, a team that grows); events are told relative to the session ("yesterday",
"3 days ago", "last month"). Questions come after the last session, with short gold answers: the
current value, an earlier value, what happened, and when (an ISO date, or the year and month for
"last month"). Everything is drawn from ``random.Random(seed)``, so the same seed gives the same
set and the data need not be committed.

>>> first = generate(customers=1)[0]
>>> len(first["sessions"]) >= 20 and sum(len(s["turns"]) for s in first["sessions"]) >= 300
True
>>> first == generate(customers=1)[0]
True
"""

from __future__ import annotations

import datetime
import random

SEED = 20261130
SESSIONS = 24
CUSTOMER_TURNS_PER_SESSION = 13

NAMES = ["Maya", "Tom", "Priya", "Lukas", "Sofia", "Daniel", "Hana", "Omar", "Chloe", "Ivan", "Nora", "Felix"]
CITIES = ["Leeds", "Bristol", "Lisbon", "Porto", "Valencia", "Krakow", "Ghent", "Utrecht", "Bergen", "Graz", "Turin",
          "Lyon", "Cork", "Tampere", "Brno", "Seville"]  # fmt: skip
JOBS = [("nurse", "St Mary's hospital"), ("data analyst", "Northwind"), ("teacher", "Riverside primary school"),
        ("architect", "Bauwerk Studio"), ("chef", "Casa Verde"), ("software engineer", "Lumen Labs"),
        ("pharmacist", "GreenCross"), ("accountant", "Fairway Partners"), ("physiotherapist", "MoveWell clinic"),
        ("graphic designer", "Pixelhaus")]  # fmt: skip
PETS = [("dog", "Biscuit"), ("cat", "Pepper"), ("dog", "Juno"), ("cat", "Miso"), ("parrot", "Kiwi"),
        ("rabbit", "Clover"), ("dog", "Bruno"), ("cat", "Luna")]  # fmt: skip
HOBBIES = ["play the cello in an amateur orchestra", "paint watercolours", "go bouldering", "sing in a choir",
           "restore old bicycles", "brew my own beer", "grow chillies on the balcony", "play chess online"]  # fmt: skip
HOBBY_ANSWERS = {"play the cello in an amateur orchestra": "cello", "paint watercolours": "watercolours",
                 "go bouldering": "bouldering", "sing in a choir": "choir", "restore old bicycles": "bicycles",
                 "brew my own beer": "beer", "grow chillies on the balcony": "chillies",
                 "play chess online": "chess"}  # fmt: skip
PARTNERS = ["Sam", "Alex", "Robin", "Jordan", "Kim", "Eli", "Noa", "Ari"]
PARTNER_JOBS = ["paramedic", "lawyer", "baker", "pilot", "librarian", "electrician", "journalist", "dentist"]
FOODS = ["ramen", "lasagne", "pho", "paella", "dumplings", "tacos", "moussaka", "risotto"]
CARS = ["Volvo", "Skoda", "Toyota", "Fiat", "Renault", "Mazda", "Kia", "Peugeot"]
SISTERS = ["Ana", "Clara", "Eva", "Greta", "Ines", "Julia", "Mila", "Zoe"]
ALLERGIES = ["shellfish", "peanuts", "penicillin", "pollen", "sesame", "kiwi fruit"]
LANGUAGES_LEARNT = ["Japanese", "Portuguese", "Korean", "Italian", "Dutch", "Greek", "Turkish", "Polish"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
DESTINATIONS = ["Iceland", "Morocco", "Japan", "Crete", "Norway", "Vietnam", "Sicily", "Scotland"]
BANDS = ["Coldplay", "Radiohead", "Arctic Monkeys", "Florence and the Machine", "Muse", "Massive Attack"]
RACES = ["half marathon", "10k race", "charity fun run", "triathlon"]

FILLER = [
    "Haha, yes, exactly.", "Long day today, honestly.", "Not much, just relaxing at home.",
    "Thanks, that's really kind of you!", "The weather has been awful all week.", "Anyway, how are you doing?",
    "I need more coffee.", "Oh wow, I didn't know that.", "That sounds great!", "Ugh, Mondays.",
    "I'm so tired, I could sleep for a week.", "Did you watch anything good lately?", "Lol, same.",
    "Right? It's crazy.", "Fair enough.", "Oh that's interesting, tell me more.", "I'm just procrastinating.",
    "Okay, cool.", "Hmm, I'm not sure about that.", "Sorry, I got distracted for a second.",
    "It's been a quiet week, nothing special.", "I love that idea!", "We should talk about that another time.",
    "Honestly, I have no idea.", "That made me laugh.", "Yeah, I think so too.", "Traffic was terrible again.",
    "I finally cleaned my desk.", "Good morning!", "Thanks for listening.",
]  # fmt: skip
AGENT_REPLIES = [
    "That's great to hear!", "Tell me more about that.", "How did that go?", "I see, thanks for sharing.",
    "Sounds like a busy week.", "Maybe you could try taking a short break.", "That must be exciting.",
    "I hope things calm down soon.", "Interesting! What happened next?", "Good luck with that!",
]  # fmt: skip


def _fact_says(profile: dict) -> dict[str, list[list[str]]]:
    """Per fact: the wordings for each of its successive values (most facts have one value)."""
    p = profile
    city_says = [
        [f"I live in {c}.", f"Life in {c} is pretty good, to be honest.", f"I've got a small flat in {c}."]
        for c in p["cities"]
    ]
    city_says[1] = [
        f"I moved to {p['cities'][1]}!",
        f"I live in {p['cities'][1]} now.",
        f"Still settling in here in {p['cities'][1]}.",
    ]
    job_says = [
        [f"I work as a {title} at {employer}.", f"Work at {employer} was busy, being a {title} is never dull."]
        for title, employer in p["jobs"]
    ]
    job_says[1] = [
        f"I started a new job as a {p['jobs'][1][0]} at {p['jobs'][1][1]}.",
        f"I work as a {p['jobs'][1][0]} at {p['jobs'][1][1]} now.",
    ]
    team_says = [[f"My team at work has {n} people.", f"There are {n} people on my team now."] for n in p["team_sizes"]]
    kind, pet = p["pet"]
    return {
        "city": city_says,
        "job": job_says,
        "team": team_says,
        "pet": [[f"I have a {kind} called {pet}.", f"My {kind} {pet} woke me up at six again.",
                 f"{pet}, my {kind}, says hello."]],
        "hobby": [[f"In my free time I {p['hobby']}.", f"I love to {p['hobby']}, it keeps me sane."]],
        "partner": [[f"My partner {p['partner']} is a {p['partner_job']}.",
                     f"{p['partner']} had a long shift, being a {p['partner_job']} is hard."]],
        "food": [[f"My favourite food is {p['food']}.", f"I could eat {p['food']} every day."]],
        "car": [[f"I drive an old {p['car']}.", f"My {p['car']} needs new tyres."]],
        "sibling": [[f"My sister {p['sibling']} lives in {p['sibling_city']}.",
                     f"I called my sister {p['sibling']} in {p['sibling_city']}."]],
        "allergy": [[f"I'm allergic to {p['allergy']}.", f"I have to avoid {p['allergy']}, I'm allergic."]],
        "language": [[f"I'm learning {p['language']}.", f"My {p['language']} lessons are going well."]],
        "gym": [[f"I go swimming every {p['swim_day']}.", f"{p['swim_day']} is my swimming day."]],
    }  # fmt: skip


def _questions(profile: dict) -> list[dict]:
    p = profile
    kind, pet = p["pet"]
    q = [
        ("current", "Where do I live now?", p["cities"][1]),
        ("earlier", "Where did I live before I moved?", p["cities"][0]),
        ("current", "What is my job now?", p["jobs"][1][0]),
        ("current", "Which company do I work for now?", p["jobs"][1][1]),
        ("earlier", "Where did I work before my new job?", p["jobs"][0][1]),
        ("earlier", "What was my job before?", p["jobs"][0][0]),
        ("current", "How many people are on my team?", str(p["team_sizes"][-1])),
        ("earlier", "How many people were on my team at first?", str(p["team_sizes"][0])),
        ("fact", "What is my pet called?", pet),
        ("fact", "What kind of pet do I have?", kind),
        ("fact", "What do I do in my free time?", HOBBY_ANSWERS[p["hobby"]]),
        ("fact", "What is my partner's name?", p["partner"]),
        ("fact", "What does my partner do for a living?", p["partner_job"]),
        ("fact", "What is my favourite food?", p["food"]),
        ("fact", "What car do I drive?", p["car"]),
        ("fact", "Where does my sister live?", p["sibling_city"]),
        ("fact", "What is my sister's name?", p["sibling"]),
        ("fact", "What am I allergic to?", p["allergy"]),
        ("fact", "Which language am I learning?", p["language"]),
        ("fact", "Which day do I go swimming?", p["swim_day"]),
    ]
    rows = [{"type": t, "question": text, "answer": answer} for t, text, answer in q]
    for event in p["events"]:
        rows.append({"type": "event", "question": event["what_question"], "answer": event["what"]})
        rows.append({"type": "when", "question": event["when_question"], "answer": event["when"]})
    return rows


def _events(rng: random.Random, profile: dict) -> list[dict]:
    """Events with a relative time phrase; the session they are told in is set by the caller."""
    race = rng.choice(RACES)
    destination = rng.choice(DESTINATIONS)
    band = rng.choice(BANDS)
    return [
        {"phrase": "yesterday", "text": f"Yesterday I ran a {race} in {{city}}!", "what": race,
         "what_question": "What race did I run?", "when_question": f"When did I run the {race}?"},
        {"phrase": "last month", "text": f"Last month we went to {destination} for a holiday.",
         "what": destination, "what_question": "Where did I go on holiday?",
         "when_question": f"When did I go to {destination}?"},
        {"phrase": "3 days ago", "text": f"3 days ago I saw {band} live in concert.", "what": band,
         "what_question": "Which band did I see in concert?", "when_question": f"When did I see {band} live?"},
        {"phrase": "last week", "text": "Last week I started a pottery class.", "what": "pottery",
         "what_question": "What class did I start?", "when_question": "When did I start the pottery class?"},
        {"phrase": "day before yesterday", "text": "The day before yesterday I passed my driving test.",
         "what": "driving test", "what_question": "Which test did I pass?",
         "when_question": "When did I pass my driving test?"},
        {"phrase": "2 weeks ago", "text": f"2 weeks ago {profile['partner']} and I adopted a tortoise.",
         "what": "tortoise", "what_question": "What animal did we adopt?",
         "when_question": "When did we adopt the tortoise?"},
    ]  # fmt: skip


def _when(phrase: str, session_date: datetime.date) -> str:
    """The gold date of an event told on ``session_date``: a day, or year-month for "last month"."""
    if phrase == "last month":
        first = session_date.replace(day=1) - datetime.timedelta(days=1)
        return first.strftime("%Y-%m")
    days = {"yesterday": 1, "day before yesterday": 2, "3 days ago": 3, "last week": 7, "2 weeks ago": 14}[phrase]
    return (session_date - datetime.timedelta(days=days)).isoformat()


def generate_customer(rng: random.Random, index: int) -> dict:
    cities = rng.sample(CITIES, 3)
    jobs = rng.sample(JOBS, 2)
    base_team = rng.randint(4, 9)
    profile = {
        "name": NAMES[index % len(NAMES)],
        "cities": cities[:2],
        "jobs": jobs,
        "team_sizes": [base_team, base_team + rng.randint(2, 4), base_team + rng.randint(6, 9)],
        "pet": rng.choice(PETS),
        "hobby": rng.choice(HOBBIES),
        "partner": rng.choice(PARTNERS),
        "partner_job": rng.choice(PARTNER_JOBS),
        "food": rng.choice(FOODS),
        "car": rng.choice(CARS),
        "sibling": rng.choice(SISTERS),
        "sibling_city": cities[2],
        "allergy": rng.choice(ALLERGIES),
        "language": rng.choice(LANGUAGES_LEARNT),
        "swim_day": rng.choice(WEEKDAYS),
    }
    profile["events"] = _events(rng, profile)
    says = _fact_says(profile)
    # When each value holds: a change (move, new job, bigger team) happens at a session.
    changes = {
        "city": [1, rng.randint(8, 14)],
        "job": [1, rng.randint(10, 18)],
        "team": [1, rng.randint(6, 11), rng.randint(14, 20)],
    }
    start = datetime.date(2026, 1, 5) + datetime.timedelta(days=rng.randint(0, 20))
    dates, day = [], start
    for _ in range(SESSIONS):
        dates.append(day)
        day += datetime.timedelta(days=rng.randint(3, 8))
    plan: dict[int, list[str]] = {s: [] for s in range(1, SESSIONS + 1)}
    for fact, wordings in says.items():
        starts = changes.get(fact, [1])
        for value_index, wording_list in enumerate(wordings):
            first = starts[value_index] if value_index else rng.randint(1, 6)
            last = starts[value_index + 1] - 1 if value_index + 1 < len(starts) else SESSIONS
            plan[first].append(wording_list[0])  # the first wording says the value plainly
            for _ in range(rng.randint(0, 2)):
                plan[rng.randint(first, last)].append(rng.choice(wording_list[1:]))
    for event in profile["events"]:
        session = rng.randint(3, SESSIONS - 1)
        text = event["text"].replace("{city}", profile["cities"][1 if session >= changes["city"][1] else 0])
        plan[session].append(text)
        event["when"] = _when(event["phrase"], dates[session - 1])
    sessions = []
    for number in range(1, SESSIONS + 1):
        said = plan[number][:]
        while len(said) < CUSTOMER_TURNS_PER_SESSION:
            said.append(rng.choice(FILLER))
        rng.shuffle(said)
        # Some facts come inside small talk, as people tell them.
        said = [f"{rng.choice(FILLER)} {text}" if rng.random() < 0.25 and text not in FILLER else text for text in said]
        turns = []
        for text in said:
            turns.append({"role": "customer", "content": text})
            turns.append({"role": "agent", "content": rng.choice(AGENT_REPLIES)})
        sessions.append({"number": number, "date": dates[number - 1].isoformat(), "turns": turns})
    return {"customer": f"long-{index:02d}-{profile['name'].lower()}", "sessions": sessions,
            "questions": _questions(profile)}  # fmt: skip


def generate(customers: int = 10, seed: int = SEED) -> list[dict]:
    rng = random.Random(seed)
    return [generate_customer(random.Random(rng.randrange(2**32)), index) for index in range(customers)]
