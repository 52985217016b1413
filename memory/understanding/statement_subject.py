"""``someone_else_probabilities(texts)``: whether a statement gives something of someone other than the customer.

"My wife is called Lucía.", "Родители мужа живут в Уфе." and "Our dog is called Biscuit." give a name or a
place of someone else — a relative, a friend, an animal — where "My name is Javier." and "I live in Kazan." give
the customer's own, and "I live with my sister." or "Our warehouse is in Zlín." (the customer's business) are
the customer's too. An update replaces a value of the same subject only (``memory.dedup.merge_rule
.same_subject``): the relation words it lists ("sister", "сестра") name only some of the people a customer
speaks of, in some languages ("mujer", "žena", "sambo", "мужа" were not among them), so this reading says whose
attribute a statement gives where the lists name nobody.

A logistic regression over the bundled model's embedding of the statement (as a passage), trained by
``python -m eval.statement_subject train`` on ``eval/data/understanding/subject_train*.jsonl`` (en de fr es
ru cs ja pl it) with its regularisation chosen on folds that each hold out one language; scored on
``subject_heldout.jsonl`` (pt nl sv tr uk ko zh ro, never trained on). The weights are plain arrays in
``statement_subject.npz``: inference needs numpy alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.understanding.linear_head import passage_probabilities

WEIGHTS = Path(__file__).with_name("statement_subject.npz")
# At or above: the statement is about someone else; at or below ``ABOUT_THE_CUSTOMER``: about the customer (or
# their household or business). Between, the reading is unsure and decides nothing. Chosen out of fold on the
# training set's language folds: 8 of 756 statements are read surely the wrong way at these, 59 left unsure (at
# 0.8 and 0.2: 3 wrong, 118 unsure). A wrong sure reading can keep a real update from replacing the old value;
# an unsure one only leaves things as they were without this reading.
SOMEONE_ELSE = 0.7
ABOUT_THE_CUSTOMER = 0.3


def someone_else_probabilities(texts: list[str]) -> np.ndarray:
    """The probability that each statement gives an attribute of someone other than the customer."""
    return passage_probabilities(WEIGHTS, texts)
