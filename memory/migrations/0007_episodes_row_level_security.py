from django.db import migrations

from tenants import rls


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_episodes")]

    operations = [
        rls.tenant_isolation("memory_episode", space_column="space_id"),
        rls.tenant_isolation("memory_episodekey", space_column="space_id"),
        rls.tenant_isolation("memory_spaceagent", space_column="space_id"),
    ]
