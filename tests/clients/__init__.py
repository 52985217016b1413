"""The clients against a live server: the Python and TypeScript clients, the LangGraph and OpenAI Agents adapters, and
the MCP server."""
