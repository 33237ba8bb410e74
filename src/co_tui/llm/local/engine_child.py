"""What the embedded model's server process runs (a script, not imported by co-tui).

    python -P engine_child.py ENGINE PARENT_PID MODEL ALIAS HOST PORT N_CTX N_THREADS

with the API key in the environment (CO_TUI_LOCAL_API_KEY), where `ps` cannot show it. It
exits as soon as its parent process changes (the parent died, even by SIGKILL), then serves
until it is terminated. Standard library and the engine only: importing co-tui here would
cost a second and tens of megabytes in every server.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time

KEY_VARIABLE = "CO_TUI_LOCAL_API_KEY"


def _exit_with_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _serve_xllamacpp(
    model: str, alias: str, host: str, port: int, n_ctx: int, threads: int, key: str
) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.model_alias = {alias}
    params.hostnames = [host]
    params.port = port
    params.n_ctx = n_ctx
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.api_keys = [key]
    params.ui = False  # no web page on the port: co-tui is its only client
    # llama.cpp keeps the state of every prompt it leaves in RAM, up to 8 GiB by default: over
    # a long session the server grew with each new prompt (260 to 490 MB in 10 minutes of evals).
    # Without it a conversation still reuses its own prefix in the slot, as llama-cpp-python did.
    params.cache_ram_mib = 0
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:  # the reason is in llama.cpp's log lines above
        print(f"co-tui: the engine stopped: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(f"co-tui: serving on {server.listening_address}", file=sys.stderr, flush=True)
    threading.Event().wait()  # the server runs in its own threads until we are terminated


def _serve_llama_cpp_python(
    model: str, alias: str, host: str, port: int, n_ctx: int, threads: int, key: str
) -> None:
    # llama_cpp.server reads every unset setting from an environment variable of the same
    # name (HOST, PORT, API_KEY, ...): the key goes there, the rest on its command line.
    os.environ["API_KEY"] = key
    options = {
        "--model": model,
        "--model_alias": alias,
        "--host": host,
        "--port": str(port),
        "--n_ctx": str(n_ctx),
        "--n_threads": str(threads),
        "--n_threads_batch": str(threads),
        # Its default computes logits for every prompt token (for logprobs, which co-tui
        # never asks for): that made a 700-token prompt take ~5 s instead of ~1 s.
        "--logits_all": "false",
    }
    sys.argv = ["llama_cpp.server", *(word for option in options.items() for word in option)]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


def main(argv: list[str]) -> None:
    engine, parent, model, alias, host, port, n_ctx, threads = argv
    _exit_with_parent(int(parent))
    key = os.environ.pop(KEY_VARIABLE)
    serve = {"xllamacpp": _serve_xllamacpp, "llama-cpp-python": _serve_llama_cpp_python}[engine]
    serve(model, alias, host, int(port), int(n_ctx), int(threads), key)


if __name__ == "__main__":
    main(sys.argv[1:])
