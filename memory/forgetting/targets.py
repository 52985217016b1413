"""What a forget request points at when it names an attribute rather than the words of a memory.

"Forget my phone number" shares no word with "+420 777 123 456 is my number", and "forget my
city" none with "I live in Kazan". The rule set (``memory.text.lexicon.FORGET_ATTRIBUTES``) maps the
request's words to an attribute and says which statements state it: a residence statement
("I live in …", "живу в …", "住んでいます"), a statement carrying a phone number or an e-mail
address as a value, an allergy statement. A preference that merely mentions a phone is not a phone
number, so it is never the target. Seven or more digits are as much a PIN, an account or an order number as
a phone number: the shape only bounds, and the model's reading of the row says which it is.

    >>> named_attribute("my phone number", "en")
    'phone'
    >>> states_attribute("I prefer email over phone.", "phone")
    False
    >>> states_attribute("My phone number is +420 777 123 456.", "phone")
    True
"""

from __future__ import annotations

import re
import unicodedata

from memory.text import lexicon
from memory.text.analysis import normalise, same_stem, search_tokens

# The learned attribute (``memory.understanding``) each rule attribute falls under.
LEARNED_ATTRIBUTE = {"email": "contact", "phone": "contact", "allergy": "health", "residence": "residence",
                     "name": "name"}  # fmt: skip
# The learned attributes a request may name when no phrase list read it (a language or a phrasing no list
# knows): "forget my X" means every row stating X. Others ("forget my dog") need the words of the request,
# which only the lists cut out. (Not ``merge_rule.SINGLE_VALUED``: a customer may have two numbers.)
NAMED_WITHOUT_WORDS = {"residence", "name", "contact"}
# How sure the model must be that a stored row states an attribute before it is taken as stating it.
ROW_ATTRIBUTE_CONFIDENCE = 0.7
# Learned attributes whose rows are taken only when they carry one of these values (a contact rule such as
# "call me after 5 pm" is not a number to forget).
VALUE_OF_LEARNED = {"contact": ("phone", "email")}
# Values whose shape does not say what they are: seven or more digits are a phone number, a PIN, an account or
# an order number alike. A row carrying one states the attribute only when the model reads the row as that
# attribute (its most likely one: a PIN reads as payment, unsure as the model may be); an e-mail address is one.
AMBIGUOUS_VALUES = frozenset({"phone"})

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE_LIKE = re.compile(r"\+?\d[\d\s().\-/]{5,}\d")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# A phone number has at least this many digits (local numbers included, dates and amounts mostly not).
PHONE_MIN_DIGITS = 7


def phrases(table: dict, language: str) -> list[str]:
    return [p.strip() for p in table.get(language, "").split(",") if p.strip()]


def word_start_match(text: str, phrase: str, language: str) -> re.Match | None:
    """Where ``phrase`` starts a word of ``text`` (any ending: "адрес" finds "адреса"); a substring in Japanese.

    >>> bool(word_start_match("мой старый адрес", "адрес", "ru"))
    True
    """
    if language == "ja" or re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", phrase):
        return re.search(re.escape(phrase), text)
    return re.search(rf"(?<![\w']){re.escape(phrase)}[\w'-]*", text)


def named_attribute(target: str, language: str) -> str | None:
    """The attribute a request names ("my old address" → residence), first in the table's order."""
    text = normalise(target)
    for attribute, rules in lexicon.FORGET_ATTRIBUTES.items():
        if any(word_start_match(text, p, language) for p in phrases(rules["asks"], language)):
            return attribute
    return None


def named_attribute_anywhere(target: str) -> str | None:
    """The attribute a request names in any language the table knows ("mój numer telefonu" → phone):
    for a request no phrase list read, a bound on what its learned attribute may take, never the decision."""
    text = normalise(target)
    for attribute, rules in lexicon.FORGET_ATTRIBUTES.items():
        for language in rules["asks"]:
            if any(word_start_match(text, p, language) for p in phrases(rules["asks"], language)):
                return attribute
    return None


def asks_for_old_value_anywhere(target: str) -> bool:
    """ "Old" in any language the table knows ("mój stary adres"): a request no list read keeps this bound."""
    text = normalise(target)
    return any(word_start_match(text, p, language) for language in lexicon.OLD_VALUE
               for p in phrases(lexicon.OLD_VALUE, language))  # fmt: skip


def row_states(
    content: str,
    *,
    attribute: str | None,
    learned: str | None,
    row_attribute: str | None = None,
    row_confidence: float = 0.0,
) -> bool:
    """Whether a stored row states what a request names: the rule attribute (``attribute``, its value type a
    bound: a "phone" request takes only rows carrying a phone number) or the learned one (``learned``), read
    by the rules or by the model's reading of the row (``row_attribute`` at ``row_confidence``)."""
    learned_row = row_attribute if row_confidence >= ROW_ATTRIBUTE_CONFIDENCE else None
    if attribute:
        rules = lexicon.FORGET_ATTRIBUTES[attribute]
        if rules["value"]:
            return states_value(content, rules["value"], LEARNED_ATTRIBUTE[attribute], row_attribute)
        if states_attribute(content, attribute):
            return True
        # Allergy is narrower than the learned "health": only the rules' words state it.
        return attribute != "allergy" and learned_row is not None and learned_row == LEARNED_ATTRIBUTE[attribute]
    if not learned:
        return False
    if learned in VALUE_OF_LEARNED:
        return any(states_value(content, value, learned, row_attribute) for value in VALUE_OF_LEARNED[learned])
    return learned_row == learned


def states_value(content: str, value: str, learned: str, row_attribute: str | None) -> bool:
    """The row carries a value of the type and, where the shape is ambiguous (``AMBIGUOUS_VALUES``), the model
    reads the row as the learned attribute the request names; a row not read (``row_attribute`` None) is
    judged by the value alone.

    >>> states_value("My PIN is 178723005.", "phone", "contact", "payment")
    False
    >>> states_value("My phone number is +420 777 123 456.", "phone", "contact", "contact")
    True
    """
    if not carries_value(content, value):
        return False
    return value not in AMBIGUOUS_VALUES or row_attribute is None or row_attribute == learned


def carries_value(content: str, value: str) -> bool:
    text = unicodedata.normalize("NFKC", content)
    if value == "email":
        return bool(_EMAIL.search(text))
    if value == "phone":
        text = _ISO_DATE.sub(" ", _EMAIL.sub(" ", text))
        return any(len(re.sub(r"\D", "", m.group())) >= PHONE_MIN_DIGITS for m in _PHONE_LIKE.finditer(text))
    return True


def states_attribute(content: str, attribute: str) -> bool:
    """Whether a stored statement states the attribute: it carries the attribute's value type and, for
    attributes without one, uses a word that states it — in any supported language, since a request
    in one language may name a memory kept in another."""
    rules = lexicon.FORGET_ATTRIBUTES[attribute]
    if rules["value"]:
        return carries_value(content, rules["value"])
    text = normalise(content)
    return any(
        word_start_match(text, phrase, language)
        for language in rules["states"]
        for phrase in phrases(rules["states"], language)
    )


def stated_attribute(message: str) -> str | None:
    """The attribute a statement (not a request) is about: "I don't live in Leeds any more" → residence."""
    for attribute in lexicon.FORGET_ATTRIBUTES:
        if lexicon.FORGET_ATTRIBUTES[attribute]["states"] and states_attribute(message, attribute):
            return attribute
    return None


def asks_for_old_value(target: str, language: str) -> bool:
    """ "my OLD address", "мой прежний адрес", "前の住所": the request names a value no longer current."""
    text = normalise(target)
    return any(word_start_match(text, p, language) for p in phrases(lexicon.OLD_VALUE, language))


def value_words(target: str, language: str) -> set[str]:
    """What the request says besides the attribute and "old": the value it names ("… in Kazan" → kazan).

    >>> sorted(value_words("my old address in Kazan", "en"))
    ['kazan']
    """
    text = normalise(target)
    generic = [
        *phrases(lexicon.OLD_VALUE, language),
        *phrases(lexicon.ATTRIBUTE_FILLERS, language),
        *(p for rules in lexicon.FORGET_ATTRIBUTES.values() for p in phrases(rules["asks"], language)),
    ]
    for phrase in generic:
        match = word_start_match(text, phrase, language)
        while match:
            text = (text[: match.start()] + " " + text[match.end() :]).strip()
            match = word_start_match(text, phrase, language)
    speaker = lexicon.FIRST_PERSON.get(language, "").split()
    if language == "ja":
        for word in sorted(speaker, key=len, reverse=True):
            text = text.replace(word + "の", " ").replace(word, " ")
    if not text.strip():
        return set()
    # "мою", "mou": inflected forms of the speaker's words, compared as lemmas.
    return search_tokens(text, language) - search_tokens(" ".join(speaker), language)


def shares_value(content: str, words: set[str], language: str) -> bool:
    return bool(words & (search_tokens(content, language) | search_tokens(content)))


def shares_stem(content: str, words: set[str], language: str) -> bool:
    """Whether the content carries a word of the same stem as one of ``words`` (lemmas, no stop words)."""
    stored = search_tokens(content, language) | search_tokens(content)
    return any(same_stem(word, token) for word in words for token in stored)
