"""List pagination for the API: ``?limit=&offset=``, with a hard ceiling on ``limit``."""

from rest_framework.pagination import LimitOffsetPagination


class LimitOffsetPage(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200
