"""An Ollama / OpenAI-compatible model list on 127.0.0.1: `GET /api/tags` and
`GET /v1/models` answer with the names given."""

from __future__ import annotations

from tests.servers.http_fake import FakeServer, Received, Reply


class ModelsServer(FakeServer):
    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__()

    def route(self, req: Received) -> Reply:
        if req.method == "GET" and req.path == "/api/tags":
            return Reply(body={"models": [{"name": n, "model": n, "size": 1} for n in self.names]})
        if req.method == "GET" and req.path == "/v1/models":
            return Reply(body={"object": "list", "data": [{"id": n} for n in self.names]})
        return Reply(404, {"error": f"no route {req.path}"})
