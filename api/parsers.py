"""JSON request parsing that turns hostile input into a 400: nesting deep enough to raise a RecursionError, and
text PostgreSQL cannot store (a lone surrogate, a NUL) anywhere in the body — a key, a nested value — which
would otherwise fail at the first write, as a 500, after part of the request had run."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from tenants.input_rules import unstorable_refusal


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON nested too deeply.") from None
        refusal = unstorable_refusal(data)
        if refusal:
            raise ParseError(refusal)
        return data
