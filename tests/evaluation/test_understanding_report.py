"""Scoring the understanding heads again (``python -m eval.understanding score``, part of ``make eval``) keeps
the line that says how the weights were trained: only ``train`` measures it, and a reader of docs/quality.md
needs it next to the held-out figures."""

from eval.understanding import last_training_line

REPORT = """<!-- section: understanding-a-turn -->
## Understanding a turn: learned intent, attribute and polarity

Machine, revision abc.

Training: 9831 sentences in am, ar; regularisation chosen by accuracy on 4 folds.

### Held out: languages never trained on (525 sentences)
<!-- /section: understanding-a-turn -->

## Relevance gate: training

Training: not this one.
"""


def test_the_training_line_of_the_understanding_section_is_carried_over():
    line = "Training: 9831 sentences in am, ar; regularisation chosen by accuracy on 4 folds."
    assert last_training_line(REPORT) == line


def test_a_report_without_the_section_or_the_line_carries_nothing():
    assert last_training_line("## Relevance gate: training\n\nTraining: not this one.\n") == ""
    assert last_training_line(REPORT.replace("Training: 9831", "Trained: 9831")) == ""
