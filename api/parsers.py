"""JSON request parsing that turns hostile input into a 400: nesting deep enough to raise a RecursionError, and
text PostgreSQL cannot store (a lone surrogate, a NUL) anywhere in the body — a key, a nested value — which
would otherwise fail at the first write, as a 500, after part of the request had run; and a top-level field the
operation does not accept, which would otherwise be dropped without a word (``api.body_fields``)."""

from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

from tenants.input_rules import unstorable_refusal

MOST_FIELDS_NAMED = 20


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON nested too deeply.") from None
        refusal = unstorable_refusal(data)
        if refusal:
            raise ParseError(refusal)
        request = (parser_context or {}).get("request")
        if request is not None:
            # Here, not at the top: DRF imports this module while its views module loads, and the schema the
            # check reads needs those views.
            from api.body_fields import unknown_body_fields

            unknown = unknown_body_fields(request.path_info, request.method, data)
            if unknown:
                raise ValidationError({name: ["Unknown field: this operation does not accept it."]
                                       for name in unknown[:MOST_FIELDS_NAMED]})  # fmt: skip
        return data
