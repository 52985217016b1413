import itertools
import json
import secrets
import socket

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tenants import scope, spaces
from tenants.api_keys import issue_api_key
from tenants.models import Membership, Space
from tenants.tenant_admin import create_operator, create_tenant

CREDENTIALS_FILE = "demo-credentials.json"


class Command(BaseCommand):
    help = "Create (once) a demo tenant with an operator login, an API key and a space; print them."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000, help="the port the server will listen on")
        parser.add_argument("--mcp-port", type=int, default=8001, help="the port the MCP server will listen on")
        parser.add_argument(
            "--check-ports",
            action="store_true",
            help="fail with the make command to use when either port is taken (make run checks before serving)",
        )

    def handle(self, *args, **options):
        port, mcp_port = options["port"], options["mcp_port"]
        if options["check_ports"]:
            check_ports_free(port, mcp_port)
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
        base = f"http://127.0.0.1:{port}"
        space_url = f"{base}/api/v1/spaces/demo-customer"
        said = json.dumps({"message": "I live in Leeds and I drive a Skoda Octavia."})
        asked = json.dumps({"query": "What car does the customer drive?"})
        curl = 'curl -H "Authorization: Bearer $KEY" -H "Content-Type: application/json"'
        self.stdout.write(
            "\n"
            "  Engram demo\n"
            "  -----------\n"
            f"  Console:  {base}/console/\n"
            f"  Login:    {credentials['username']} / {credentials['password']}\n"
            f"  API key:  {credentials['api_key']}\n"
            f"  API docs: {base}/api/docs/\n"
            f"  MCP:      http://127.0.0.1:{mcp_port}/mcp (Authorization: Bearer <API key>)\n"
            "\n"
            f"  KEY={credentials['api_key']}\n"
            "  # store what a customer said (wait=true: learnt before the answer comes)\n"
            f"  {curl} -d '{said}' '{space_url}/turns?wait=true'\n"
            "  # recall it\n"
            f"  {curl} -d '{asked}' {space_url}/recall\n"
        )


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def check_ports_free(port: int, mcp_port: int) -> None:
    """A taken port would otherwise stop the server after the demo is printed, or the MCP server silently."""
    taken = [p for p in (port, mcp_port) if not port_free(p)]
    if not taken:
        return
    free = list(itertools.islice((p for p in range(max(port, mcp_port) + 1, 65536) if port_free(p)), 2))
    raise CommandError(
        f"Port {', '.join(map(str, taken))} on 127.0.0.1 is in use (another Engram, or another program). "
        f"Serve on free ones: make run PORT={free[0]} MCP_PORT={free[1]}"
    )
