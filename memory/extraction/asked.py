"""What the customer only asked is not a fact they stated (#26), judged by the learned reading in any language.

An entry is refused when every sentence it cites asks the agent (the rest short asides), or when it carries a
word only the questions it cites say and not the statements beside them:

- "Is it true that renters can't get the grant?" → "Emma can't get the grant because she rents." (only asks);
- "I rent my flat. Is it true renters can't get the grant?" → "Renters can't get the grant." (drawn from the
  question; "Emma rents a flat." is the statement's).

A part of a question that reads as a statement ("We have four kids, can we all fit in the van?") is a statement.
"""

from __future__ import annotations

import re

from memory.text.analysis import WEAK_CLAUSE_BREAK, detect_language, search_tokens, split_sentences, words
from memory.understanding.features import ends_as_question
from memory.understanding.readings import Reading, read

# How sure the learned reading must be that a sentence is a question: less sure where the sentence ends as a
# question does in every script ("?", "？"), surer where it does not (a greeting and a Japanese statement read
# together scored 0.43 for a question).
QUESTION_CONFIDENCE = {True: 0.4, False: 0.6}
# A part of a question this long or longer may state something of its own.
MIN_STATEMENT_PART_WORDS = 3
# A sentence beside a question this short or shorter, read as small talk, is an aside ("Thanks a lot.").
MAX_ASIDE_WORDS = 3


def only_asks(span_text: str) -> bool:
    """Whether the span only asks the agent: it has a question, and every other sentence is a short aside the
    reading calls small talk (the reading also calls casual remarks about oneself small talk: "The store's doing
    great!"), and no part of a question states something."""
    sentences = split_sentences(span_text) or [span_text]
    read_as = list(zip(sentences, read(sentences), strict=True))
    asked = [s for s, r in read_as if _asks(s, r)]
    rest = [(s, r) for s, r in read_as if s not in asked]
    if not asked or any(r.intent != "small_talk" or len(words(s)) > MAX_ASIDE_WORDS for s, r in rest):
        return False
    return not _statement_parts(asked)


def drawn_from_questions(span_text: str, content: str) -> bool:
    """Whether an entry citing statements and questions carries a word only the questions say ("My order 4471 is
    late. Has order 4471 been refunded?" → "Order 4471 has been refunded."). A span with no statement at all is
    ``only_asks``'s to judge."""
    sentences = split_sentences(span_text) or [span_text]
    asked = [s for s, r in zip(sentences, read(sentences), strict=True) if _asks(s, r)]
    if not asked:
        return False
    stated = [s for s in sentences if s not in asked] + _statement_parts(asked)
    if not stated:
        return False
    language = detect_language(span_text)
    claimed = search_tokens(content, language)
    in_questions = claimed & set().union(*(search_tokens(s, language) for s in asked))
    in_statements = claimed & set().union(*(search_tokens(s, language) for s in stated))
    return bool(in_questions - in_statements)


def _statement_parts(asked: list[str]) -> list[str]:
    """The parts of the questions, between commas, colons or dashes, that read as statements."""
    parts = [p for s in asked for p in re.split(WEAK_CLAUSE_BREAK, s) if len(words(p)) >= MIN_STATEMENT_PART_WORDS]
    parts = [p for p in parts if p.strip() not in asked]
    return [p for p, r in zip(parts, read(parts), strict=True) if r.intent == "statement"]


def _asks(sentence: str, reading: Reading) -> bool:
    return reading.intent == "question" and reading.intent_confidence >= QUESTION_CONFIDENCE[ends_as_question(sentence)]
