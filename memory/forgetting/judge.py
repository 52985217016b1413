"""Deciding whether a customer message asks to forget something, and what.

Whether a message is a request to forget, a correction or neither, and what attribute it is about, is the
learned reading of its sentences (``memory.understanding.readings``), in any language. The rule set in
``memory.text.lexicon`` stays as a helper and a bound: it cuts the target's words out of a request it
reads ("forget my OLD address IN KAZAN"), and it can only veto — a forget verb negated, asked about,
reported or in the past ("don't forget …", "how do I delete …", "I forgot my password") asks nothing,
whatever the model says. A request no list read (a language or a phrasing no list knows) may take only
the rows of a single-valued attribute it names. Then the judge: the ``openai`` engine asks the model with
the candidate memories in front of it, the ``offline`` engine applies the rules; either way it only picks
from candidates that code has already bounded (``memory.forgetting.conversational``).
"""

from __future__ import annotations

import dataclasses
import logging
import re

from django.conf import settings

from memory.forgetting import targets
from memory.llm.errors import ModelUnavailable
from memory.text import lexicon
from memory.text.analysis import LATIN_LANGUAGES, detect_language, normalise, search_tokens, split_sentences
from memory.understanding.readings import SUBJECT_ATTRIBUTES, Reading, read

logger = logging.getLogger(__name__)

FORGET_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["is_forget_request", "request_quote", "delete_ids", "confirmation"],
    "properties": {
        "is_forget_request": {"type": "boolean"},
        "request_quote": {"type": ["string", "null"]},
        "delete_ids": {"type": "array", "items": {"type": "string"}},
        "confirmation": {"type": ["string", "null"]},
    },
}
# Bounds on what a model reply may carry (a reply is input from a stranger).
MAX_MODEL_IDS = 50
MAX_MODEL_TEXT_CHARS = 2000
# Offline, an explicit request takes the best match and only those this close to it: one request is
# about one thing, and the next-nearest memory is most often a different one.
TIGHT_MARGIN = 0.02
NEGATIONS = {
    "en": r"\b(?:don't|do not|doesn't|does not|didn't|never|not|no longer|isn't|is not|aren't|that's not|n't)\b",
    "ru": r"(?<!\w)(?:не|нет|больше не|никогда)(?!\w)",
    # Czech negates on the verb ("nemáme", "nebydlím"); "nej…" is a superlative unless it is "nejsme/nejsem".
    "cs": r"(?<!\w)(?:není|nejsme|nejsem|ne|nikdy|už ne|ne(?!j(?!s))\w{2,}(?:me|m|í|ou|te|jí|l|la|li|lo))(?!\w)",
    "de": r"\b(?:nicht|kein|keine|keinen|nie|niemals|nicht mehr)\b",
    "es": r"(?<!\w)(?:no|nunca|ya no)(?!\w)",
    "fr": r"(?<!\w)(?:ne|n'|pas|jamais|plus)(?!\w)",
    "ja": r"(?:ではありません|じゃない|ではない|ません|ない)",
}


@dataclasses.dataclass
class ForgetIntent:
    kind: str | None  # "explicit", "correction" or None
    targets: list[str]  # texts to match stored memories against
    language: str
    attribute: str | None = None  # what an explicit request names ("phone", "residence", …)
    wants_old: bool = False  # "my OLD address": never the current value
    value_words: set[str] = dataclasses.field(default_factory=set)  # "… in Kazan"
    states_new_value: bool = False  # a correction that also says what is true now: mined, not deleted
    broad: bool = False  # "forget everything", "delete all my data": no message can carry it out
    not_a_request: bool = False  # a forget verb negated, asked about or reported: "how do I make you forget …"
    learned_attribute: str | None = None  # what the model reads the request or correction to be about
    negative: bool | None = None  # the correction's learned polarity: it contradicts rows of the other one
    # No phrase list read the request: it takes only rows of a single-valued attribute it names, or rows that
    # carry its words (or their stems) and that the model reads as the attribute it reads in the request.
    model_only: bool = False


@dataclasses.dataclass
class Offered:
    """A memory code offers the judge, with what the offline rules weigh."""

    id: str
    content: str
    distance: float
    current: bool = True  # not superseded
    order: float = 0.0  # creation time as a number: later is newer
    named: bool = False  # carries every word the request names, or has it as its topic
    shares_words: bool = False  # carries a word of the request, or its stem (``targets.shares_stem``)
    attribute: str | None = None  # the learned attribute of the row's content, and how sure the model is
    attribute_confidence: float = 0.0
    negative: bool | None = None  # the row's learned polarity (None: not read)

    def states(self, intent: ForgetIntent) -> bool:
        return targets.row_states(
            self.content,
            attribute=intent.attribute,
            learned=intent.learned_attribute,
            row_attribute=self.attribute,
            row_confidence=self.attribute_confidence,
        )


def _phrases(table: dict, language: str) -> list[str]:
    return [p.strip() for p in table.get(language, "").split(",") if p.strip()]


def _find(text: str, phrase: str, language: str) -> int:
    if language == "ja":
        return text.find(phrase)
    match = re.search(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", text)
    return match.start() if match else -1


def _denegated(text: str, language: str) -> str:
    pattern = NEGATIONS.get(language)
    return re.sub(r"\s+", " ", re.sub(pattern, " ", text)).strip() if pattern else text


def _statement_not_request(before: str, language: str) -> bool:
    """ "Don't forget …", "we never forget …": the verb is negated or has a subject, so nothing is asked."""
    before = before.rstrip(" ,")
    return any(
        before == word or before.endswith(" " + word) for word in _phrases(lexicon.NOT_A_REQUEST_BEFORE, language)
    )


_SENTENCE_END = re.compile(r"[.!?;。！？]")


def _asked_about_or_reported(text: str, at: int, end: int, language: str) -> bool:
    """ "How do I make you forget …?", "would you forget … if I asked?", "I never said forget …", "my colleague
    said: forget …": within the verb's sentence, a question word, a supposition or a verb of saying before it, or
    a condition after it (``NOT_A_REQUEST_CONTEXT``, ``NOT_A_REQUEST_AFTER``). "Can you forget …?" is a request."""
    starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, at)]
    before = text[starts[-1] if starts else 0 : at]
    stop = _SENTENCE_END.search(text, end)
    after = text[end : stop.start() if stop else len(text)]
    return any(_find(before, p, language) >= 0 for p in _phrases(lexicon.NOT_A_REQUEST_CONTEXT, language)) or any(
        _find(after, p, language) >= 0 for p in _phrases(lexicon.NOT_A_REQUEST_AFTER, language)
    )


def _is_broad(rest: str, target: str, language: str) -> bool:
    """ "Forget everything (you know about me)", "delete all my data": a word for everything and nothing named
    besides it ("forget everything about my vans" names the vans)."""
    if not any(_find(rest, p, language) >= 0 for p in _phrases(lexicon.BROAD_FORGET, language)):
        return False
    named = search_tokens(target, language) - lexicon.BROAD_FILLER_TOKENS
    for phrase in _phrases(lexicon.BROAD_FORGET, language):
        named -= search_tokens(phrase, language)
    return not named


# How sure the model must be of a request's or a correction's attribute for it to name one.
ATTRIBUTE_CONFIDENCE = 0.5
# The forget score that, with a list reading a request in the same words, makes one (not the top score).
REQUEST_SCORE_WITH_WORDS = 0.15
# A forget or delete verb in the past: the speaker (or someone) reports forgetting or deleting something
# ("I forgot my password", "я забыл пароль", "ich habe es vergessen"), which asks nothing. A veto on the
# learned reading, never a reason to delete.
REPORTED_FORGETTING = {
    "en": r"\b(?:forgot|forgotten|deleted|removed|erased|wiped)\b",
    "ru": r"(?<!\w)(?:забыл|забыла|забыли|забыло|удалил|удалила|удалили|стёр|стер|стёрла|стерла)(?!\w)",
    "cs": r"(?<!\w)(?:zapomněl|zapomněla|zapomněli|zapomněl jsem|smazal|smazala|smazali|vymazal|vymazala)(?!\w)",
    "de": r"\b(?:vergaß|vergaßen|vergessen hab|vergessen habe|vergessen haben|gelöscht)\b"
    r"|\b(?:habe|hab|haben|hatte)\b.*\bvergessen\b",
    "es": r"(?<!\w)(?:olvidé|olvidó|olvidamos|olvidado|olvidada|borré|borró|borrado|eliminé|eliminado)(?!\w)",
    "fr": r"(?<!\w)(?:oublié|oubliée|oubliés|supprimé|supprimée|effacé|effacée)(?!\w)",
    "ja": r"忘れました|忘れてしまい|忘れちゃ|忘れた|削除しました|消しました",
}


def _reports_forgetting(text: str) -> bool:
    return any(re.search(pattern, text) for pattern in REPORTED_FORGETTING.values())


def _clauses(sentence: str) -> list[str]:
    """A sentence's comma-, semicolon- or dash-parted clauses ("That's wrong, we don't make furniture")."""
    parts = [p.strip(" .!?;:。！？") for p in re.split(r"[,;:—–、，；]", sentence)]
    return [p for p in parts if p and p != sentence.strip(" .!?;:。！？")]


def _confident_attribute(reading: Reading) -> str | None:
    if reading.attribute not in SUBJECT_ATTRIBUTES or reading.attribute_confidence < ATTRIBUTE_CONFIDENCE:
        return None
    return reading.attribute


def read_intent(message: str, *, cache_scope: str | None = None) -> ForgetIntent:
    """Explicit request, correction, or neither — as the model reads the message's sentences — and what to
    match: the rule set's cut of the request's words where a list reads it, the request sentence otherwise.

    The sentences and their clauses are read in one batch."""
    language = detect_language(message)
    sentences = split_sentences(message) or [message]
    clauses = {s: _clauses(s) for s in sentences}
    texts = list(dict.fromkeys([*sentences, *(c for cs in clauses.values() for c in cs)]))
    readings = dict(zip(texts, read(texts, cache_scope=cache_scope), strict=True))
    rule = _rule_reading(message)
    vetoed = rule.not_a_request or _reports_forgetting(normalise(message))
    if vetoed:
        return ForgetIntent(None, [message], language, not_a_request=rule.not_a_request)
    forget = next((s for s in sentences if _asks_to_forget(readings[s], rule)), None)
    if forget is not None:
        return _request(message, forget, readings[forget], rule)
    correction = next((s for s in sentences if _denies(s, readings[s])), None)
    if correction is not None:
        return _correction(message, correction, [readings[c] for c in clauses[correction]], readings, rule)
    return ForgetIntent(None, [message], language)


def _asks_to_forget(reading: Reading, rule: ForgetIntent) -> bool:
    """The model reads a request to forget; or gives it a fair score where a list reads one too ("Could
    you please delete my phone number?" is read a question asking for something); or the list reads a
    request to forget everything ("forget everything", lower case and bare, reads as small talk to the
    model): that one deletes nothing — it is answered and routed to an operator — so the list may decide it."""
    if rule.kind == "explicit" and rule.broad:
        return True
    return reading.intent == "forget" or (
        rule.kind == "explicit" and reading.intent_scores["forget"] >= REQUEST_SCORE_WITH_WORDS
    )


def _denies(sentence: str, reading: Reading) -> bool:
    """A correction, or a statement that denies (as the model reads its polarity, or the language's
    negation pattern): "we don't make furniture" contradicts what may be stored."""
    if reading.intent == "correction":
        return True
    return reading.intent == "statement" and (reading.negative or is_negated(sentence))


def _request(message: str, sentence: str, reading: Reading, rule: ForgetIntent) -> ForgetIntent:
    learned = _confident_attribute(reading)
    if rule.kind == "explicit":
        # The lists read the request too: they cut out what it names ("my old address in Kazan").
        return dataclasses.replace(rule, learned_attribute=learned)
    # A request in words no list knows: the whole sentence is the target, and it may take only the rows of a
    # single-valued attribute the model reads in it, or rows carrying its words that the model reads as that
    # attribute — agreeing with any attribute word a list knows.
    attribute = targets.named_attribute_anywhere(sentence)
    if attribute and targets.LEARNED_ATTRIBUTE[attribute] != learned:
        learned = None
    return ForgetIntent(
        "explicit",
        [sentence],
        detect_language(sentence),
        attribute=attribute if learned in targets.NAMED_WITHOUT_WORDS else None,
        wants_old=targets.asks_for_old_value_anywhere(sentence),
        broad=any(_is_broad(normalise(sentence), normalise(sentence), lang) for lang in lexicon.BROAD_FORGET),
        learned_attribute=learned,
        model_only=True,
    )


def _correction(
    message: str, sentence: str, clause_readings: list[Reading], readings: dict[str, Reading], rule: ForgetIntent
) -> ForgetIntent:
    """A correction: what it denies is matched (its denying clauses, without their negation where the
    language has a pattern for it); one that also states what is true now ("we're not a bakery, we're a
    coffee roaster") is an update — mined, never deleted."""
    # The rules' reading knows the language better when a short message reads as another Latin one.
    language = rule.language if rule.kind == "correction" else detect_language(sentence)
    reading = readings[sentence]
    denying = [
        c for c, r in zip(_clauses(sentence), clause_readings, strict=True) if r.negative and _confident_attribute(r)
    ]
    affirming = any(r.intent == "statement" and not r.negative and _confident_attribute(r) for r in clause_readings)
    text = normalise(message)
    # Where the language has a negation pattern the rules' reading of the clauses may say so too (never less).
    new_value = affirming or (language in NEGATIONS and states_new_value(text, language))
    texts = [message, _denegated(text, language)]
    for clause in denying:
        texts += [clause, _denegated(normalise(clause), language)]
    learned = _confident_attribute(reading)
    denied = [r for r in clause_readings if r.negative and _confident_attribute(r)]
    if denied:
        learned = _confident_attribute(denied[0])
    return ForgetIntent(
        "correction",
        [t for t in dict.fromkeys(texts) if t],
        language,
        attribute=targets.stated_attribute(message),
        states_new_value=new_value,
        learned_attribute=learned,
        negative=reading.negative or is_negated(sentence),
    )


def _rule_reading(message: str) -> ForgetIntent:
    """The rule set's reading: explicit request, correction, or neither; and what to match. A helper (it
    cuts out the target's words) and a veto (``not_a_request``), no longer the decision.

    Short messages are often taken for another Latin-script language ("Ya no vivo en Leeds." reads
    as German), so when the detected language's phrases find nothing, the other Latin-script
    languages' phrases are tried."""
    detected = detect_language(message)
    text = normalise(message)
    others = [lang for lang in LATIN_LANGUAGES if lang != detected] if detected in LATIN_LANGUAGES else []
    for language in (detected, *others):
        intent, forget_negated = _read_in(message, text, language)
        if intent is not None:
            return intent
        if forget_negated:
            break
    return ForgetIntent(None, [message], detected, not_a_request=forget_negated)


def _read_in(message: str, text: str, language: str) -> tuple[ForgetIntent | None, bool]:
    """The reading with one language's phrases, and whether a forget verb was negated ("don't forget")."""
    forget_negated = False
    for phrase in _phrases(lexicon.EXPLICIT_FORGET, language):
        at = _find(text, phrase, language)
        if at < 0:
            continue
        if _statement_not_request(text[:at], language) or _asked_about_or_reported(
            text, at, at + len(phrase), language
        ):
            forget_negated = True
            continue
        if language == "ja":
            # Japanese names the target before the verb: 「家具について忘れてください」.
            target = rest = text[:at]
            for marker in (*_phrases(lexicon.FORGET_TARGET_MARKERS, language), "を"):
                target = target.removesuffix(marker)
        else:
            rest = text[at + len(phrase) :]
            target = rest
            for marker in _phrases(lexicon.FORGET_TARGET_MARKERS, language):
                where = _find(rest, marker, language)
                if where >= 0:
                    target = rest[where + len(marker) :]
                    break
        target = target.strip(" .,!?:;。、！？")
        return ForgetIntent(
            "explicit",
            [t for t in dict.fromkeys([target, _denegated(target, language)]) if t],
            language,
            attribute=targets.named_attribute(target, language),
            wants_old=targets.asks_for_old_value(target, language),
            value_words=targets.value_words(target, language),
            broad=_is_broad(rest, target, language),
        ), False
    # In "we never forget a deadline" the negation belongs to the verb "forget": it corrects nothing stored.
    if not forget_negated and any(_find(text, p, language) >= 0 for p in _phrases(lexicon.CORRECTION, language)):
        return ForgetIntent(
            "correction",
            [message, _denegated(text, language)],
            language,
            attribute=targets.stated_attribute(message),
            states_new_value=states_new_value(text, language),
        ), False
    return None, forget_negated


_CLAUSE_BREAK = {
    "en": r"[,;:.!?—–]| but | rather | instead ",
    "ru": r"[,;:.!?—–]| а | но | зато ",
    "cs": r"[,;:.!?—–]| ale | nýbrž ",
    "de": r"[,;:.!?—–]| sondern | aber ",
    "es": r"[,;:.!?—–]| sino | pero ",
    "fr": r"[,;:.!?—–]| mais ",
    "ja": r"[、。，．！？!?]|けど|が、",
}


def states_new_value(text: str, language: str) -> bool:
    """Whether a correction also says what is true: "we're not a bakery, we're a coffee roaster" has an
    affirmative clause with content of its own; "that's wrong, we don't make furniture" has none
    (its only affirmative clause is the correction phrase itself)."""
    fillers = [*_phrases(lexicon.CORRECTION, language), *_phrases(lexicon.SMALL_TALK, language)]
    for clause in re.split(_CLAUSE_BREAK.get(language, _CLAUSE_BREAK["en"]), f" {text} "):
        clause = clause.strip()
        if not clause or is_negated(clause, language):
            continue
        for phrase in fillers:
            clause = (
                clause.replace(phrase, " ")
                if language == "ja"
                else re.sub(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", " ", clause)
            )
        if search_tokens(clause, language) - _DISCOURSE_WORDS:
            return True
    return False


# Words of a correction's affirmative clause that carry no value of their own ("no, actually …").
_DISCOURSE_WORDS = {"actually", "sorry", "wrong", "true", "right", "okay", "well", "mistake", "oops"}


@dataclasses.dataclass
class Judgement:
    is_forget_request: bool
    delete_ids: list[str]
    confirmation: str | None
    engine: str


def is_negated(text: str, language: str | None = None) -> bool:
    language = language or detect_language(text)
    pattern = NEGATIONS.get(language)
    return bool(pattern and re.search(pattern, normalise(text)))


def _within_margin(offered: list[Offered], margin: float) -> list[Offered]:
    if not offered:
        return []
    best = min(o.distance for o in offered)
    return [o for o in offered if o.distance <= best + margin]


def _not_current(pool: list[Offered], attribute_rows: list[Offered]) -> list[Offered]:
    """ "Old" picks a superseded value, or an older one while a newer of the same attribute exists — never
    the current one."""
    superseded = [o for o in pool if not o.current]
    if superseded:
        return superseded
    active = [o for o in attribute_rows if o.current]
    if len(active) < 2:
        return []
    newest = max(active, key=lambda o: o.order)
    return [o for o in pool if o.id != newest.id]


def _named_pool(intent: ForgetIntent, offered: list[Offered]) -> tuple[list[Offered], list[Offered]]:
    """The rows stating the attribute a request names (all rows without one), narrowed to the value it
    names; and the attribute's rows before that narrowing."""
    pool = offered
    if _names_attribute(intent):
        pool = [o for o in offered if o.states(intent)]
    attribute_rows = pool
    if intent.value_words:
        naming = [o for o in pool if targets.shares_value(o.content, intent.value_words, intent.language)]
        # Beside an attribute the words name its value: "my address in Paris" with only Kazan stored names
        # nothing stored (a miss, never a wrong deletion). Alone they are the target's words, which a
        # memory in other words or another language may not share: they narrow, they do not veto.
        pool = naming if intent.attribute else (naming or pool)
    return pool, attribute_rows


def _names_attribute(intent: ForgetIntent) -> bool:
    """Whether the request names an attribute: by a list's word, or — the lists naming none — by the model."""
    return bool(intent.attribute or (intent.learned_attribute in targets.NAMED_WITHOUT_WORDS and intent.model_only))


def _worded(intent: ForgetIntent, offered: list[Offered]) -> list[Offered]:
    """A request no list read that names no single-valued attribute: only current rows carrying its words (or
    their stems) that the model reads, surely, as the attribute it reads in the request."""
    if not intent.learned_attribute:
        return []
    return [
        o
        for o in offered
        if o.current
        and o.shares_words
        and o.attribute == intent.learned_attribute
        and o.attribute_confidence >= targets.ROW_ATTRIBUTE_CONFIDENCE
    ]


def rule_bound(intent: ForgetIntent, offered: list[Offered]) -> list[Offered] | None:
    """What code admits for an explicit request that names an attribute or "old", or that no list read —
    the bound on any judge, a model included ("forget my phone number" never reaches "I prefer email over
    phone"); None when a request the lists read names neither (the floor and the margin bound it)."""
    if intent.kind != "explicit":
        return None
    if intent.model_only and not _names_attribute(intent):
        return _worded(intent, offered)
    if not (_names_attribute(intent) or intent.wants_old):
        return None
    pool, attribute_rows = _named_pool(intent, offered)
    if intent.wants_old:
        return _not_current(pool, attribute_rows)
    return [o for o in pool if o.current]


def select_explicit(intent: ForgetIntent, offered: list[Offered]) -> list[Offered]:
    """What an explicit request deletes: never wider than asked.

    An attribute ("my phone number") takes only the memories that state it, narrowed to the value
    the request names ("… in Kazan") when one does; "old" never takes the current value. Without an
    attribute: the memories that carry every word of what was named, else the best match and those
    within a tight margin of it. A request no list read takes only the rows of the attribute it names."""
    if intent.model_only:
        bound = rule_bound(intent, offered) or []
        return bound if _names_attribute(intent) else _within_margin(bound, TIGHT_MARGIN)
    pool, attribute_rows = _named_pool(intent, offered)
    if intent.wants_old:
        return _not_current(pool, attribute_rows)
    pool = [o for o in pool if o.current]
    named = [o for o in pool if o.named]
    if named and not intent.attribute:
        return named
    return _within_margin(pool, TIGHT_MARGIN)


def contradicts(intent: ForgetIntent, offered: Offered) -> bool:
    """A correction contradicts a row of the other polarity ("we don't make furniture" / "we manufacture
    furniture"), as the model reads both; by the negation patterns where a row was not read."""
    said = intent.negative if intent.negative is not None else is_negated(intent.targets[0], intent.language)
    stored = offered.negative if offered.negative is not None else is_negated(offered.content)
    return stored != said


def judge_offline(intent: ForgetIntent, message: str, offered: list[Offered]) -> Judgement:
    if intent.kind is None or (intent.kind == "correction" and intent.states_new_value):
        # A correction that says what is true now is an update: the writer supersedes, with history.
        return Judgement(False, [], None, "offline")
    if intent.kind == "explicit":
        return Judgement(True, [o.id for o in select_explicit(intent, offered)], None, "offline")
    # A correction contradicts what it negates: "we don't deliver on Sundays" deletes "we deliver on
    # Sundays", not "we never deliver on Sundays", which it agrees with; and only rows stating the
    # attribute the rules read in it.
    contradicted = [o for o in offered if o.current and contradicts(intent, o)]
    if intent.attribute:
        contradicted = [o for o in contradicted if targets.states_attribute(o.content, intent.attribute)]
    chosen = _within_margin(contradicted, TIGHT_MARGIN)
    return Judgement(bool(chosen), [o.id for o in chosen], None, "offline")


def _model_reply(data: dict) -> tuple[bool, str | None, list[str], str | None]:
    """The reply's fields with their exact JSON types, or ModelUnavailable: "false", 1 or null where a
    boolean belongs is a model failure, not a verdict."""
    if set(data) != set(FORGET_SCHEMA["required"]):
        raise ModelUnavailable("forget judgement: the reply's fields do not match the schema")
    verdict, quote, ids, confirmation = (data[k] for k in ("is_forget_request", "request_quote", "delete_ids",
                                                          "confirmation"))  # fmt: skip
    if type(verdict) is not bool:
        raise ModelUnavailable("forget judgement: is_forget_request is not a boolean")
    if not (quote is None or (isinstance(quote, str) and len(quote) <= MAX_MODEL_TEXT_CHARS)):
        raise ModelUnavailable("forget judgement: request_quote is not a string or null")
    if not (isinstance(ids, list) and len(ids) <= MAX_MODEL_IDS and all(isinstance(i, str) for i in ids)):
        raise ModelUnavailable("forget judgement: delete_ids is not a list of strings")
    if not (confirmation is None or isinstance(confirmation, str)):
        raise ModelUnavailable("forget judgement: confirmation is not a string or null")
    return verdict, quote, ids, confirmation


def quote_asks(quote: str | None, message: str) -> bool:
    """The model's quote is the customer's own words and the rule set reads a request in it."""
    if not quote or not quote.strip():
        return False
    quoted = normalise(quote).strip(" .,!?:;。、！？")
    at = normalise(message).find(quoted) if quoted else -1
    if at < 0 or read_intent(quote).kind is None or read_intent(message).not_a_request:
        return False
    # Read with the words before it too: the quote "forget our renewal" from "Don't forget our renewal" asks nothing.
    return read_intent(normalise(message)[: at + len(quoted)]).kind is not None


def judge_with_model(message: str, intent: ForgetIntent, offered: list[Offered]) -> Judgement:
    """The model picks among the rows the rule set admits (all offered when the request names no attribute
    or "old"); its ids are intersected with them, and with those its own quote's attribute admits."""
    from memory.llm.client import chat_client, chat_json, prompt

    listed = "\n".join(f"{o.id}: {o.content}" for o in offered)
    data = chat_json(
        chat_client(),
        system=prompt("forget_system.txt"),
        user=f"Customer message:\n<<<\n{message}\n>>>\n\nStored memories:\n{listed}",
        schema_name="forget_judgement",
        schema=FORGET_SCHEMA,
    )
    verdict, quote, ids, confirmation = _model_reply(data)
    if verdict and not (quote_asks(quote, message) or intent.kind is not None):
        # Only the customer's words make a request: a model that calls a plain statement one is overruled.
        logger.warning("forget judgement: the model's request is not in the customer's words; nothing deleted")
        return Judgement(False, [], None, "openai")
    allowed = {o.id for o in offered}
    if verdict and quote and intent.kind is None:
        # A request the rule set did not read in the whole message is bounded by what its quote names.
        quoted_bound = rule_bound(read_intent(quote), offered)
        if quoted_bound is not None:
            allowed &= {o.id for o in quoted_bound}
    return Judgement(verdict, [i for i in ids if i in allowed] if verdict else [], confirmation, "openai")


def model_judges() -> bool:
    """Whether a chat model judges forget requests (it may read one the rule set does not)."""
    return settings.ENGRAM_EXTRACTION_ENGINE == "openai"


def judge(message: str, intent: ForgetIntent, offered: list[Offered]) -> Judgement:
    """With candidates and a model, the model decides within the checks; otherwise (or on failure) the rule set does."""
    if intent.kind == "explicit" and intent.broad:
        return Judgement(True, [], None, "offline")  # "forget everything": routed, never carried out here
    bound = rule_bound(intent, offered)
    shown = offered if bound is None else bound  # the model sees, and may pick, only what the rule admits
    if shown and model_judges():
        try:
            return judge_with_model(message, intent, shown)
        except ModelUnavailable as exc:
            logger.warning("forget judgement fell back to the rule set: %s", exc)
    return judge_offline(intent, message, offered)
