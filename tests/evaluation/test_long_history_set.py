"""The generated long-conversation set: the same seed gives the same set, at the size the comparison needs,
and every "when" answer is the session date moved back by what the customer said."""

import datetime
import re

from eval.long_history import answer_share
from eval.long_history_data import generate


def test_the_same_seed_gives_the_same_set_and_another_seed_another():
    assert generate(customers=2) == generate(customers=2)
    assert generate(customers=1, seed=1) != generate(customers=1, seed=2)


def test_the_set_is_long_enough_to_compare_with_raw_search():
    customers = generate()
    assert len(customers) >= 10
    for customer in customers:
        assert len(customer["sessions"]) >= 20
        assert sum(t["role"] == "customer" for s in customer["sessions"] for t in s["turns"]) >= 300
        dates = [s["date"] for s in customer["sessions"]]
        assert dates == sorted(dates) and len(set(dates)) == len(dates)
    questions = [q for c in customers for q in c["questions"]]
    assert len(questions) >= 300
    assert sum(q["type"] == "when" for q in questions) >= 50


def test_a_when_answer_is_the_date_the_event_happened_not_the_day_it_was_told():
    customer = generate(customers=1)[0]
    told = {
        turn["content"]: datetime.date.fromisoformat(session["date"])
        for session in customer["sessions"]
        for turn in session["turns"]
    }
    [(text, day)] = [(t, d) for t, d in told.items() if "Yesterday I ran" in t]
    race = re.search(r"ran an? (.+) in ", text).group(1)
    [answer] = [q["answer"] for q in customer["questions"] if q["question"] == f"When did I run the {race}?"]
    assert answer == (day - datetime.timedelta(days=1)).isoformat()


def test_an_answer_counts_only_as_whole_words():
    assert answer_share("12", "We were 12 in March.") == 1.0
    assert answer_share("12", "In 2012 we were 4.") == 0.0
    assert answer_share("charity fun run", "I ran a charity run.") == 2 / 3
