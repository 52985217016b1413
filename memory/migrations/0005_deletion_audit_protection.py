from django.db import migrations

from tenants import rls


class Migration(migrations.Migration):
    dependencies = [("memory", "0004_deletion_audit")]

    operations = [
        rls.tenant_isolation("memory_deletionaudit"),
        migrations.RunSQL(
            """
            CREATE FUNCTION engram_refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'the deletion audit is append-only: % refused', TG_OP
                    USING ERRCODE = 'insufficient_privilege';
            END $$;
            CREATE TRIGGER deletion_audit_append_only
                BEFORE UPDATE OR DELETE ON memory_deletionaudit
                FOR EACH ROW EXECUTE FUNCTION engram_refuse_audit_change();
            """,
            """
            DROP TRIGGER IF EXISTS deletion_audit_append_only ON memory_deletionaudit;
            DROP FUNCTION IF EXISTS engram_refuse_audit_change();
            """,
        ),
    ]
