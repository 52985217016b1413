from django.db import migrations

from tenants import rls


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_pair_marks")]

    operations = [rls.tenant_isolation("memory_pairmark", space_column="space_id")]
