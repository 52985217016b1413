"""A question that calls the customer by name asks about the customer.

An agent knows whom it serves and may ask its memory by name ("When did Gina launch her ad campaign?"). The
learned reading has never met the name: it reads such a question as about someone else about as often as
about the customer (on LoCoMo's development questions, 94 of 233 read "other person" first), and the
relevance gate, which weighs whom a question is about, then doubts the very rows that answer. The name a
deployment gives the customer is the space's ``display_name`` (grounding already lets an entry call the
customer by it). When a word of the question is that name, in any inflection ("Gina's", "Галины"), the
question is read as about the customer and the name is left out of what is embedded and searched for: the
customer's own rows say "I", never their name, and the name only moves the question's vector away from them.
"""

from __future__ import annotations

import dataclasses
import re

from memory.text.analysis import detect_language
from memory.understanding.readings import SUBJECTS, Reading

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_EMAIL = re.compile(r"\S+@\S+")
# Shorter words of a display name are initials or particles ("J.", "de"), not a name to recognise.
SHORTEST_NAME = 3
_POSSESSIVE = re.compile(r"(?:'s?|s')$")
# Languages whose nouns are declined, names too ("Galina" → "Galiny", "Jana" → "Janě"): there a name may
# change its last letter and take an ending.
DECLINED_NAMES = frozenset({"be", "bg", "cs", "et", "fi", "hr", "hu", "lt", "lv", "pl", "ru", "sk", "sl", "sr", "uk"})
MOST_ENDING = 2


def name_words(display_name: str) -> frozenset[str]:
    """The words of a display name a question may call the customer by (an e-mail address is not a name).

    >>> sorted(name_words("Gina Rossi"))
    ['gina', 'rossi']
    >>> sorted(name_words("J. de Vries"))
    ['vries']
    >>> sorted(name_words("gina.rossi@example.com"))
    []
    """
    text = _EMAIL.sub(" ", display_name or "")
    return frozenset(w.lower().replace("’", "'") for w in _WORD.findall(text) if len(w) >= SHORTEST_NAME)


def _same_name(word: str, name: str, declined: bool) -> bool:
    """``word`` is ``name``: as written, with a possessive or genitive "s" ("Gina's", "Ginas"), or, where
    names are declined, with its last letter changed and a short ending ("Galiny" for "Galina", "Janě" for
    "Jana"). "Paula" is not "Paul", nor "Marta" "Marek"."""
    if word == name or word == name + "s":
        return True
    if not declined:
        return False
    stem = name[:-1] if len(name) > SHORTEST_NAME else name
    return word.startswith(stem) and len(word) - len(stem) <= MOST_ENDING


def customer_named_in(question: str, display_name: str) -> list[str]:
    """The words of ``question`` that call the customer by their display name, as written.

    >>> customer_named_in("When did Gina launch her ad campaign?", "Gina Rossi")
    ['Gina']
    >>> customer_named_in("What is Caroline's relationship status?", "Caroline")
    ["Caroline's"]
    >>> customer_named_in("Где живёт Галины сестра?", "Галина Петрова")
    ['Галины']
    >>> customer_named_in("Where does Paula work?", "Paul")
    []
    >>> customer_named_in("Where does Gina live?", "")
    []
    """
    names = name_words(display_name)
    if not names:
        return []
    # A name is written with a capital in the scripts that have one: "bill" in a question is not Bill.
    capitalised = [w for w in _WORD.findall(question) if not w[:1].islower()]
    bare = {w: _POSSESSIVE.sub("", w.lower().replace("’", "'")) for w in capitalised}
    if not any(b[:SHORTEST_NAME] == n[:SHORTEST_NAME] for b in bare.values() for n in names):
        return []  # the usual case, decided without reading the question's language
    declined = detect_language(question) in DECLINED_NAMES
    return [w for w in capitalised if any(_same_name(bare[w], name, declined) for name in names)]


def without_names(question: str, named: list[str]) -> str:
    """The question with the words that name the customer left out.

    >>> without_names("When did Gina launch her ad campaign?", ["Gina"])
    'When did launch her ad campaign?'
    """
    text = question
    for word in named:
        text = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", " ", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def about_the_customer(reading: Reading | None) -> Reading | None:
    """The reading of a question that names the customer, its name left out: its subject is the customer."""
    if reading is None:
        return None
    return dataclasses.replace(reading, subject_scores={s: 1.0 if s == "customer" else 0.0 for s in SUBJECTS})
