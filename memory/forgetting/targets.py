"""What a forget request points at when it names an attribute rather than the words of a memory.

"Forget my phone number" shares no word with "+420 777 123 456 is my number", and "forget my
city" none with "I live in Kazan". The rule set (``memory.extraction.lexicon.FORGET_ATTRIBUTES``) maps the
request's words to an attribute and says which statements state it: a residence statement
("I live in …", "живу в …", "住んでいます"), a statement carrying a phone number or an e-mail
address as a value, an allergy statement. A preference that merely mentions a phone is not a phone
number, so it is never the target.

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

from memory.extraction import lexicon
from memory.text.analysis import normalise, search_tokens

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
