# A new column of an existing table: memory_message's row-level security policy (0002) covers it.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0020_turn_derived_offline"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="answers_turn_id",
            field=models.UUIDField(blank=True, null=True),
        ),
    ]
