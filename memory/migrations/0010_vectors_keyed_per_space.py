"""Vectors stored before they were keyed per space are rotated under their space's key once, by the
first version's dense rotation (memory/text/vectors.py); 0016 moves them to today's transform. Needs
the keyring, like every other start; a database without tenants has nothing to do."""

from django.db import migrations


def key_vectors(apps, schema_editor):
    from memory.text.vectors import into_space_v1, rekey_stored_vectors

    rekey_stored_vectors(into_space_v1)


def unkey_vectors(apps, schema_editor):
    from memory.text.vectors import out_of_space_v1, rekey_stored_vectors

    rekey_stored_vectors(out_of_space_v1)


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_pair_marks_row_level_security"), ("tenants", "0005_shared_cache_table")]

    operations = [migrations.RunPython(key_vectors, unkey_vectors)]
