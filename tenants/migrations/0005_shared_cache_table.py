"""The cache table behind rate limits and the console login throttle (settings.CACHES).

A database cache, so every server process counts against the same limit; created here, in the
same shape ``manage.py createcachetable`` gives it, so ``migrate`` is the only setup step.
"""

from django.db import migrations

CREATE = """
CREATE TABLE IF NOT EXISTS engram_cache (
    cache_key varchar(255) NOT NULL PRIMARY KEY,
    value text NOT NULL,
    expires timestamp with time zone NOT NULL
);
CREATE INDEX IF NOT EXISTS engram_cache_expires ON engram_cache (expires);
"""


class Migration(migrations.Migration):
    dependencies = [("tenants", "0004_settings_change_rls")]

    operations = [migrations.RunSQL(CREATE, "DROP TABLE IF EXISTS engram_cache;")]
