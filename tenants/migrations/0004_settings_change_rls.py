from django.db import migrations

from tenants import rls


class Migration(migrations.Migration):
    dependencies = [("tenants", "0003_settings_change")]

    operations = [rls.tenant_isolation("tenants_settingschange")]
