import json
import secrets

from django.conf import settings
from django.core.management.base import BaseCommand

from tenants import scope, spaces
from tenants.api_keys import issue_api_key
from tenants.models import Membership, Space
from tenants.tenant_admin import create_operator, create_tenant

CREDENTIALS_FILE = "demo-credentials.json"


class Command(BaseCommand):
    help = "Create (once) a demo tenant with an operator login, an API key and a space; print them."

    def handle(self, *args, **options):
        path = settings.VAR_DIR / CREDENTIALS_FILE
        if not path.exists():
            tenant = create_tenant(name="Demo", slug="demo")
            password = secrets.token_urlsafe(12)
            create_operator(tenant=tenant, username="demo", password=password, role=Membership.Role.ADMIN)
            issued = issue_api_key(tenant=tenant, name="demo key", scopes=["turns", "admin"])
            with scope.tenant_scope(tenant):
                if not Space.objects.filter(external_id="demo-customer").exists():
                    spaces.create_space(tenant=tenant, external_id="demo-customer", display_name="Demo customer")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"username": "demo", "password": password, "api_key": issued.secret}, indent=2))
            path.chmod(0o600)
            self.stdout.write(f"Created the demo tenant; its credentials are kept in {path} (development only).")
        credentials = json.loads(path.read_text())
        self.stdout.write(
            "\n"
            "  Engram demo\n"
            "  -----------\n"
            "  Console:  http://127.0.0.1:8000/console/\n"
            f"  Login:    {credentials['username']} / {credentials['password']}\n"
            f"  API key:  {credentials['api_key']}\n"
            '  Try:      curl -H "Authorization: Bearer $KEY" http://127.0.0.1:8000/api/v1/spaces\n'
            "  API docs: http://127.0.0.1:8000/api/docs/\n"
        )
