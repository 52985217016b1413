"""``whose(texts)``: whose attribute each statement gives — the customer's, their business's, or someone else's.

"My wife is called Lucía.", "Родители мужа живут в Уфе." and "Our dog is called Biscuit." give a name or a
place of someone else — a relative, a friend, an animal — where "My name is Javier." and "I live in Kazan." give
the customer's own, and "Přestěhovali jsme sklad do Rajhradu." or "Our warehouse is in Zlín." their business's.
An update replaces a value of the same subject only (``memory.dedup.merge_rule.same_subject``): the relation
words it lists ("sister", "сестра") name only some of the people a customer speaks of, in some languages
("mujer", "žena", "sambo", "мужа" were not among them), and no list says a warehouse's move is not the
customer's, so these readings say whose attribute a statement gives where the lists name nobody.

Two logistic regressions over the bundled model's embedding of the statement (as a passage): someone else
against the customer and their business, and the business against everything else. Trained by ``python -m
eval.statement_subject train`` on ``eval/data/understanding/subject_train*.jsonl`` (en de fr es ru cs ja pl it)
with their regularisation chosen on folds that each hold out one language; scored on ``subject_heldout.jsonl``
(pt nl sv tr uk ko zh ro, never trained on). The weights are plain arrays in ``statement_subject.npz`` and
``statement_company.npz``: inference needs numpy alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from memory.understanding.linear_head import passage_probabilities

WEIGHTS = Path(__file__).with_name("statement_subject.npz")
COMPANY_WEIGHTS = Path(__file__).with_name("statement_company.npz")
# A reading at or above ``SURE`` says yes, at or below ``SURE_NOT`` no; between, it is unsure and decides
# nothing. Chosen out of fold on the training set's language folds: someone else, 11 of 810 statements read
# surely the wrong way at these and 72 left unsure; the business, 4 wrong and 11 unsure. A wrong sure reading
# can keep a real update from replacing the old value; an unsure one only leaves things as they were without
# this reading.
SURE = 0.7
SURE_NOT = 0.3

SOMEONE_ELSE = "someone else"
THE_BUSINESS = "the customer's business"
THE_CUSTOMER = "the customer"
UNSURE = "unsure"


# Every number read as one short number: a phone number's digits outweigh its words in the small model's
# embedding ("Телефон соседки: +7 922 000-11-22." read as the customer's at 0.29, masked at 0.56).
_NUMBER = re.compile(r"\+?\d[\d \-/.()]*\d")


def as_read(text: str) -> str:
    """The statement as both readings see it, in training and in use."""
    return _NUMBER.sub("123", text)


def someone_else_probabilities(texts: list[str]) -> np.ndarray:
    """The probability that each statement gives an attribute of someone other than the customer."""
    return passage_probabilities(WEIGHTS, [as_read(text) for text in texts])


def company_probabilities(texts: list[str]) -> np.ndarray:
    """The probability that each statement gives an attribute of the customer's business."""
    return passage_probabilities(COMPANY_WEIGHTS, [as_read(text) for text in texts])


def whose(texts: list[str]) -> list[str]:
    """Whose attribute each statement gives, or ``UNSURE``."""
    return [
        _whose(float(other), float(company))
        for other, company in zip(someone_else_probabilities(texts), company_probabilities(texts), strict=True)
    ]


def _whose(someone_else: float, company: float) -> str:
    if someone_else >= SURE:
        return SOMEONE_ELSE
    if someone_else > SURE_NOT:
        return UNSURE
    if company >= SURE:
        return THE_BUSINESS
    return THE_CUSTOMER if company <= SURE_NOT else UNSURE
