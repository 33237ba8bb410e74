"""The engines that can serve the embedded model: each runs llama.cpp's OpenAI-compatible
HTTP server in a child process, started by `engine_child.py` with the same arguments.

- `xllamacpp` (the default): llama.cpp's own C++ server in a prebuilt manylinux wheel (MIT),
  installed in seconds; nothing is compiled.
- `llama-cpp-python`: llama.cpp behind a Python (FastAPI) server; pip compiles it from source
  (about 16 minutes on 2 cores). Install it yourself to use it; see docs/local-model.md.

Both speak the same HTTP API, so everything above `server.py` is the same for either; the
`local_engine` setting chooses.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from co_tui.config.settings import LocalEngineName as EngineName

CHILD_SCRIPT = Path(__file__).with_name("engine_child.py")


@dataclass(frozen=True)
class Engine:
    name: EngineName
    requirement: str  # what `pip install` needs for it
    modules: tuple[str, ...]  # every module the child imports
    # Lowercase fragments of its log that say the port was taken (another process won the
    # race for the free port between our probe and the server's bind).
    port_taken_marks: tuple[str, ...]

    def missing_modules(self) -> list[str]:
        return [name for name in self.modules if importlib.util.find_spec(name) is None]


ENGINES: dict[EngineName, Engine] = {
    "xllamacpp": Engine(
        "xllamacpp",
        "xllamacpp",
        ("xllamacpp",),
        ("couldn't bind http server socket",),
    ),
    "llama-cpp-python": Engine(
        "llama-cpp-python",
        "llama-cpp-python[server]",
        ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"),
        ("address already in use", "errno 98"),
    ),
}
