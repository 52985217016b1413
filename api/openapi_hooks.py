"""Document the API's error responses on every operation (one error shape everywhere)."""

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"nullable": True},
            },
        }
    },
}
ERRORS = {
    "400": "Invalid or malformed request; details name the fields.",
    "401": "Missing, wrong or revoked API key.",
    "403": "The key lacks the scope this endpoint needs.",
    "404": "No such space, turn or memory in this tenant.",
    "405": "Method not allowed.",
    "406": "Not acceptable.",
    "409": "Conflict (a duplicate).",
    "413": "Request body or message too large.",
    "415": "Unsupported media type.",
    "429": "Rate limit reached; see Retry-After.",
    "503": "The database is unavailable; retry shortly.",
}


def add_error_responses(result, generator, request, public):
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    reference = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict) and "responses" in operation:
                for status, description in ERRORS.items():
                    operation["responses"].setdefault(status, {"description": description, "content": reference})
    return result


def closed_request_bodies(result, generator, request, public):
    """A JSON request body takes only its documented fields (``api.body_fields`` refuses others with a 400): say
    so with ``additionalProperties: false`` on each body's component, so generated clients and fuzzers agree. A
    component a multipart body shares stays open: its files come as parts named after their argument."""
    components = result.get("components", {}).get("schemas", {})
    bodies = [
        (media_type, content.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1])
        for path_item in result.get("paths", {}).values()
        for operation in path_item.values()
        if isinstance(operation, dict)
        for media_type, content in operation.get("requestBody", {}).get("content", {}).items()
    ]
    shared = {name for media_type, name in bodies if media_type != "application/json"}
    for media_type, name in bodies:
        component = components.get(name)
        if media_type == "application/json" and name not in shared and component and component.get("properties"):
            component.setdefault("additionalProperties", False)
    return result
