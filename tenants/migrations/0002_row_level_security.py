from django.db import migrations

from tenants import rls


def check_vector_extension(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if cursor.fetchone() is None:
            raise RuntimeError(
                "The pgvector extension is not installed in this database. As a superuser run "
                "CREATE EXTENSION vector; (in template1 too, for test databases). See docs/operations.md."
            )


class Migration(migrations.Migration):
    dependencies = [("tenants", "0001_initial")]

    operations = [
        migrations.RunPython(check_vector_extension, migrations.RunPython.noop),
        rls.scope_functions(),
        # A tenant row is visible to its own scope; maintenance commands may list tenant ids.
        migrations.RunSQL(
            """
            ALTER TABLE tenants_tenant ENABLE ROW LEVEL SECURITY;
            ALTER TABLE tenants_tenant FORCE ROW LEVEL SECURITY;
            CREATE POLICY tenant_isolation ON tenants_tenant
                USING (id = engram_current_tenant()) WITH CHECK (id = engram_current_tenant());
            CREATE POLICY maintenance_listing ON tenants_tenant FOR SELECT
                USING (current_setting('engram.maintenance', true) = 'on');
            """,
            """
            DROP POLICY IF EXISTS maintenance_listing ON tenants_tenant;
            DROP POLICY IF EXISTS tenant_isolation ON tenants_tenant;
            ALTER TABLE tenants_tenant NO FORCE ROW LEVEL SECURITY;
            ALTER TABLE tenants_tenant DISABLE ROW LEVEL SECURITY;
            """,
        ),
        rls.tenant_isolation("tenants_space", space_column="id"),
        rls.tenant_isolation("tenants_spacekey", space_column="space_id"),
        rls.tenant_isolation("tenants_apikey"),
        # Authentication finds a key by its random, visible prefix before the tenant is known.
        rls.extra_policy(
            "tenants_apikey",
            "api_key_lookup",
            command="SELECT",
            using="prefix = nullif(current_setting('engram.api_key_prefix', true), '')",
        ),
        rls.tenant_isolation("tenants_membership"),
        # The console finds the logged-in user's memberships before the tenant is known.
        rls.extra_policy(
            "tenants_membership",
            "own_memberships",
            command="SELECT",
            using="user_id = nullif(current_setting('engram.user_id', true), '')::bigint",
        ),
    ]
