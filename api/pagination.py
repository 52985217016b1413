"""List pagination for the API: ``?limit=&offset=``, with a hard ceiling on ``limit``.

A malformed ``limit`` or ``offset`` is a 400 naming the parameter, not silently the first page:
a client paging with a bug would otherwise loop over page one for ever.
"""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination


def _whole_number(request, name: str, *, minimum: int, maximum: int | None, default):
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError({name: [f"Must be a whole number (got {raw[:20]!r})."]}) from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise ValidationError({name: [f"Must be {bound}."]})
    return value


# PostgreSQL's OFFSET is a bigint; past it the database, not the caller, would get the blame.
MAX_OFFSET = 2**62


class LimitOffsetPage(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200

    def get_limit(self, request):
        return _whole_number(request, self.limit_query_param, minimum=1, maximum=self.max_limit,
                             default=self.default_limit)  # fmt: skip

    def get_offset(self, request):
        return _whole_number(request, self.offset_query_param, minimum=0, maximum=MAX_OFFSET, default=0)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"].update({"minimum": 1, "maximum": self.max_limit})
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update({"minimum": 0, "maximum": MAX_OFFSET})
        return parameters
