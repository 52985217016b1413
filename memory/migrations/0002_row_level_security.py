from django.db import migrations

from tenants import rls


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial"), ("tenants", "0002_row_level_security")]

    operations = [
        rls.tenant_isolation("memory_session", space_column="space_id"),
        rls.tenant_isolation("memory_message", space_column="space_id"),
        rls.tenant_isolation("memory_memory", space_column="space_id"),
        rls.tenant_isolation("memory_turn", space_column="space_id"),
    ]
