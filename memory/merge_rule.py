"""When two statements of one kind are the same fact: the dedup rule shared by the writer, the
console's preview and the evaluation.

Measured on the labelled set (docs/quality.md), the bundled embedding model puts paraphrases
("We run four delivery vans" / "Our fleet is four delivery vans") and minimal pairs that say
different things ("We have four vehicles" / "We have four drivers", "per month" / "per year") at
the same distances, 0.007–0.05. Distance alone therefore cannot merge safely. With
``dedup_requires_same_terms`` (the default) two statements merge only when, besides being within
the dedup distance and carrying no conflicting values, one's content terms are contained in the
other's and they use the same relation words (direction, period): "December is our busiest season"
merges with "Our busiest season is December"; "We ship to Germany" never with "We ship from
Germany". Operators with a stronger embedding model can switch the lexical check off.
"""

from __future__ import annotations

from memory.text_analysis import content_terms, detect_language, lemma, value_terms, words

# Stop words that still decide what a statement says: direction and period.
RELATION_WORDS = {
    "en": {"to", "from", "into", "out", "per", "month", "year", "week", "day", "monthly", "yearly", "weekly", "daily",
           "annually", "before", "after"},
    "ru": {"в", "из", "на", "с", "от", "до", "месяц", "год", "неделя", "день", "ежемесячно", "ежегодно"},
    "cs": {"do", "z", "ze", "na", "od", "měsíc", "rok", "týden", "den", "měsíčně", "ročně", "týdně", "denně"},
    "de": {"nach", "aus", "von", "zu", "monat", "jahr", "woche", "tag", "monatlich", "jährlich"},
    "es": {"a", "de", "desde", "hacia", "mes", "año", "semana", "día", "mensual", "anual"},
    "fr": {"à", "de", "vers", "mois", "an", "année", "semaine", "jour", "mensuel", "annuel"},
}  # fmt: skip


def values_conflict(old_text: str, new_text: str) -> bool:
    """Both carry values (numbers, months, weekdays) and they differ: a changed fact, not a restatement."""
    old_values, new_values = value_terms(old_text), value_terms(new_text)
    return bool(old_values and new_values and old_values != new_values)


def relation_words(text: str, language: str) -> set[str]:
    table = RELATION_WORDS.get(language, set())
    return {w for w in (lemma(word, language) for word in words(text)) if w in table} | {
        w for w in words(text) if w in table
    }


def same_terms(a: str, b: str) -> bool:
    """One statement's content terms are contained in the other's, with the same relation words."""
    language = detect_language(a)
    terms_a, terms_b = set(content_terms(a, language)), set(content_terms(b, language))
    if not terms_a or not terms_b or not (terms_a <= terms_b or terms_b <= terms_a):
        return False
    return relation_words(a, language) == relation_words(b, language)


def is_restatement(a: str, b: str, distance: float, *, dedup_distance: float, requires_same_terms: bool) -> bool:
    """Merge ``b`` into ``a``: close enough, no conflicting values, and (by default) the same terms."""
    if distance > dedup_distance or values_conflict(a, b):
        return False
    return same_terms(a, b) if requires_same_terms else True
