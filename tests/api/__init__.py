"""The HTTP API's contract: its OpenAPI schema, the spaces endpoints, and one set of input rules that answers hostile
or malformed input with a clear 4xx."""
