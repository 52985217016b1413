"""Clear the RLS scope a request set when the request ran inside an outer transaction.

Normally ATOMIC_REQUESTS commits at the end of the view and the transaction-local scope ends with
it. When the request ran inside an enclosing transaction (tests, or a caller's atomic block), the
scope would outlive the request; this resets it.
"""

from django.db import connection

from tenants import scope


class ResetScopeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if connection.in_atomic_block and not connection.needs_rollback:
            scope.clear_scope()
        return response
