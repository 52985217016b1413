"""Stored vectors move from the first version's dense rotation per space to the structured transform
(keyed signed permutations around a public mixer; docs/decisions/0006-vectors-keyed-per-space.md,
"Structured rotation"). Reversible. Costs 50–100 ms a space (deriving the old matrix) plus the
rows: up to ~17 minutes for 10,000 spaces. All or nothing: the move is not idempotent, so a half-done run
must roll back rather than be run again over the spaces it finished."""

from django.db import migrations


def to_structured(apps, schema_editor):
    from memory.text.vectors import rekey_stored_vectors, v1_to_current

    rekey_stored_vectors(v1_to_current)


def to_dense(apps, schema_editor):
    from memory.text.vectors import current_to_v1, rekey_stored_vectors

    rekey_stored_vectors(current_to_v1)


class Migration(migrations.Migration):
    dependencies = [("memory", "0015_turn_forget_reply")]

    operations = [migrations.RunPython(to_structured, to_dense)]
