"""Questions about someone else recall only rows that name that someone.

"Where does the Prime Minister live?" asks the attribute the customer's own "I live in Leeds." states, and
the bundled model puts the two close: the relevance gate, reading the pair, let it through (as it did "What's
my colleague's phone number?" → "I prefer to be contacted by email" and "¿Dónde vive el hermano de mi jefe?"
→ "Tengo un hermano mayor que se llama Pablo."). The learned reading already tells whom a question is about
(``memory.understanding``, its subject head); what it does not tell is by which word. That word is found by
taking each word out in turn and reading the question again: the one whose absence lowers "about someone
else" most ("Minister", "colleague", "jefe"). A row is then recalled only if it carries that word, a word of
its stem, or its translation in the languages recall translates between ("My brother Pablo lives in Madrid."
still answers "Where does my brother live?").

Only a question the reading is sure of (``SOMEONE_ELSE_CONFIDENCE``) pays for the extra readings — one short
embedding per word — and only it can lose a row: questions about the customer in the third person ("Where
does she live?", "What is his phone number?") read below it.
"""

from __future__ import annotations

import dataclasses
import re

from memory.models import Memory
from memory.text.analysis import carries_words, detect_language, search_tokens
from memory.text.cross_language import translated_tokens
from memory.text.digests import topic_digest
from memory.understanding.readings import SUBJECT_ATTRIBUTES, Reading, read
from tenants.encrypted_fields import read_without_keeping

# Measured on the relevance gate's training questions (eval/data/recall_gate/, 528 answerable in 12
# languages): 10 read at least this surely as about someone else; on the unrelated questions of
# eval/data/recall_unrelated.json 31 of 300, most of them the questions about other people that leaked.
SOMEONE_ELSE_CONFIDENCE = 0.6
_WORD = re.compile(r"\w+")
MOST_WORDS = 12
# A second naming word counts when it names the person at least this share as much as the first
# ("partner" +0.12 beside "living" +0.20, "hermano" beside "jefe"), not a verb that barely moves the reading.
SECOND_WORD_SHARE = 0.5
MOST_NAME_ROWS = 20
ASKED_OF_SOMEONE = tuple(sorted(SUBJECT_ATTRIBUTES - {"family"}))


@dataclasses.dataclass(frozen=True)
class SomeoneElse:
    """The word a question names the other person by, and the search tokens a row may carry it as."""

    word: str
    tokens: frozenset[str]
    words: tuple[str, ...] = ()  # as written in the question

    def is_the_customer(self, space) -> bool:
        """Whether the customer's own name rows carry the word: "What car does Mr. Novak drive?" after "I'm
        Tom Novak." is about the customer, whom an agent may call by name."""
        named = Memory.objects.filter(
            space=space, superseded_by__isnull=True, topic_digest=topic_digest(space.id, "name")
        ).exclude(kind="topic")
        return any(self.named_in(read_without_keeping(row, "content")) for row in named[:MOST_NAME_ROWS])

    def named_in(self, content: str) -> bool:
        return carries_words(content, self.tokens, detect_language(content))


def someone_else_asked_about(question: str, reading: Reading | None) -> SomeoneElse | None:
    """The other person a question surely asks about, or None (the customer, the company, nobody, unsure)."""
    if reading is None or reading.subject_scores.get("other_person", 0.0) < SOMEONE_ELSE_CONFIDENCE:
        return None
    language = detect_language(question)
    words = [w for w in dict.fromkeys(_WORD.findall(question)) if search_tokens(w, language) | search_tokens(w)]
    if not 2 <= len(words) <= MOST_WORDS:
        # One content word, or a script written without spaces: nothing to take out. A long message (a
        # turn's recall reads the customer's whole message) is not one question; its reading is not paid for.
        return None
    without_each = [re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", " ", question, count=1).strip() for word in words]
    # Taking out the word that names the person lowers "about someone else" and leaves what is asked about;
    # taking out the verb ("bydlí", "live") lowers the attribute instead. What is asked about is the
    # attribute besides "family": a relative's job reads as family first ("What does my partner do for a
    # living?"), and the relative's own word must not count against itself.
    asked = max(ASKED_OF_SOMEONE, key=lambda name: reading.attribute_scores.get(name, 0.0))
    person = reading.subject_scores.get("other_person", 0.0)
    attribute = reading.attribute_scores.get(asked, 0.0)

    def naming(r: Reading) -> float:
        return (person - r.subject_scores.get("other_person", 0.0)) - (attribute - r.attribute_scores.get(asked, 0.0))

    scores = [naming(r) for r in read(without_each)]
    # The two words that name the person most: one is often the person ("Minister", "sestra", "colleague"),
    # and a single choice is fragile where two words share the naming ("What does my partner do for a
    # living?": "living" +0.17, "partner" +0.12). A row needs either; the second lets through a row that
    # carries the verb asked with it, which the gate then judges as before. Only a second word that names
    # about as much counts (``SECOND_WORD_SHARE``): the verb asked ("живёт", "bydlí", "live") names the person
    # a little or not at all (+0.02 to +0.10 against the name's +0.45 to +0.98), and by its sign alone it came
    # and went with each retraining, letting the customer's own "Я живу в …" answer "Где живёт президент?".
    first, *rest = sorted(range(len(words)), key=lambda i: -scores[i])
    chosen = [words[first], *(words[i] for i in rest[:1] if scores[i] >= SECOND_WORD_SHARE * scores[first] > 0)]
    tokens = set().union(*(search_tokens(w, language) | search_tokens(w) | translated_tokens(w) for w in chosen))
    return SomeoneElse(word=" / ".join(chosen), tokens=frozenset(tokens), words=tuple(chosen))
