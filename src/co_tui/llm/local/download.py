"""Downloading a catalog model into the models folder: streamed to `<file>.part`, resumed
with an HTTP Range request after a cut, verified against its SHA-256, then renamed into place.

What it will not do, whatever the server says: write anywhere but `<models>/<file>.part` and
`<models>/<file>` (the name comes from the catalog, never from a header or the URL), follow a
link at the `.part` path, keep more bytes than the catalog's size allows, follow a redirect
from a plain-http server to another one, or put a file whose hash differs in place (the part
is deleted and the message names both hashes).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from co_tui.llm.local.catalog import (
    CatalogModel,
    UnknownModel,
    catalog_model,
    is_plain_file_name,
    is_sha256,
)
from co_tui.safety.private_files import FILE_MODE, private_dir

PART_SUFFIX = ".part"
CHUNK = 1 << 20
MAX_REDIRECTS = 5
# Seconds to connect, and that the server may stay silent mid-file (then: resumable).
CONNECT_TIMEOUT = 15.0
READ_TIMEOUT = 60.0

# done bytes, the whole file's bytes when known
Progress = Callable[[int, int | None], None]


class PullError(Exception):
    """The download cannot go on; the message is one line saying what and what to do."""


class LicenceNotAccepted(PullError):
    """The model's licence needs the user's acceptance first (--accept-licence)."""


class NotDownloaded(LookupError):
    """A catalog model that `co-tui model pull` has not downloaded (yet)."""


@dataclass(frozen=True)
class Pull:
    """What one pull fetches: the catalog row, from where, and the hash it must match."""

    model: CatalogModel
    url: str
    sha256: str


def mirrored(url: str, mirror: str) -> str:
    """`url` on `mirror`, a base URL that keeps the same paths. Raises PullError."""
    parts = urlsplit(mirror.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise PullError(
            f"local_model_mirror must be an http(s) base URL such as https://mirror.example, "
            f"not {mirror!r}"
        )
    return mirror.strip().rstrip("/") + urlsplit(url).path


def plan_pull(
    model: CatalogModel,
    *,
    sha256: str | None = None,
    accepted_licence: bool = False,
    mirror: str | None = None,
) -> Pull:
    """The pull of `model`, or PullError saying why it may not happen: no pinned hash and
    none given, a given hash that differs from the pinned one, a licence not accepted, a
    file name that is not a plain name, a malformed mirror."""
    if not is_plain_file_name(model.file):
        raise PullError(f"the catalog's file name {model.file!r} is not a plain .gguf name")
    given = (sha256 or "").strip().lower()
    if given and not is_sha256(given):
        raise PullError(f"--sha256 takes 64 hexadecimal digits, not {sha256!r}")
    if model.sha256 and given and given != model.sha256:
        raise PullError(
            f"the catalog pins {model.sha256} for {model.name}; --sha256 gave {given}: "
            "refused (drop --sha256 to use the pinned hash)"
        )
    expected = model.sha256 or given
    if not expected:
        raise PullError(
            f"{model.name} has no pinned SHA-256: read it on {page_of(model.url)} and "
            f"give it: co-tui model pull {model.name} --sha256 HEX"
        )
    if model.licence.needs_acceptance and not accepted_licence:
        raise LicenceNotAccepted(
            f"{model.name} is under the {model.licence.id} licence ({model.licence.url}): "
            f"read it, then accept it with co-tui model pull {model.name} --accept-licence"
        )
    url = mirrored(model.url, mirror) if mirror else model.url
    return Pull(model, url, expected)


def page_of(url: str) -> str:
    """A Hugging Face file's page for its download URL (other URLs as they are)."""
    return url.replace("/resolve/", "/blob/", 1)


def part_path(folder: Path, model: CatalogModel) -> Path:
    return folder / (model.file + PART_SUFFIX)


def downloaded_model(name: str, folder: Path) -> Path:
    """The downloaded file of the catalog model `name`. Raises UnknownModel, NotDownloaded."""
    model = catalog_model(name)
    path = folder / model.file
    if not path.is_file():
        raise NotDownloaded(
            f"model '{model.name}' is not downloaded: run co-tui model pull {model.name}"
        )
    return path


def pull(plan: Pull, folder: Path, progress: Progress | None = None) -> Path:
    """Download `plan` into `folder` (created 0700), resuming a `.part` left by an earlier
    pull; return the verified file's path. Raises PullError; Ctrl-C (KeyboardInterrupt)
    leaves the part to resume."""
    private_dir(folder)
    target = folder / plan.model.file
    part = part_path(folder, plan.model)
    if _holds(target, plan.sha256):
        if progress:
            progress(target.stat().st_size, target.stat().st_size)
        return target
    fd = _open_part(part)
    try:
        _lock(fd, plan.model)
    except PullError:
        os.close(fd)
        raise
    try:
        download = _Download(plan, fd, progress)
        download.resume()
        with httpx.Client(
            timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
            follow_redirects=False,
            headers={"Accept-Encoding": "identity", "User-Agent": "co-tui model pull"},
        ) as client:
            download.fetch(client)
        got = download.hasher.hexdigest()
        if got != plan.sha256:
            os.unlink(part)
            raise PullError(
                f"checksum mismatch for {plan.model.file}: expected {plan.sha256}, got {got}; "
                "the download was deleted"
            )
        os.fsync(fd)
        os.replace(part, target)
        _sync_folder(folder)
    except PullError:
        if os.fstat(fd).st_size == 0:  # nothing to resume: leave nothing behind
            os.unlink(part)
        raise
    finally:
        os.close(fd)
    return target


def _holds(path: Path, sha256: str) -> bool:
    """Whether `path` is a regular file (not a link) whose bytes hash to `sha256`."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
    except OSError:
        return False
    hasher = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest() == sha256


def _open_part(part: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(part, flags, FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PullError(
                f"{part} is a symbolic link: co-tui downloads only into a file of its own "
                "there; remove the link and pull again"
            ) from None
        raise PullError(f"cannot write {part}: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        os.close(fd)
        raise PullError(f"{part} is not a file of yours: remove it and pull again")
    if stat.S_IMODE(st.st_mode) != FILE_MODE:
        os.fchmod(fd, FILE_MODE)
    return fd


def _lock(fd: int, model: CatalogModel) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise PullError(f"another co-tui model pull is downloading {model.name} now") from None


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


class _Download:
    """One pull's bytes: what the part holds, hashed as it grows."""

    def __init__(self, plan: Pull, fd: int, progress: Progress | None) -> None:
        self.plan = plan
        self.fd = fd
        self.progress = progress
        self.hasher = hashlib.sha256()
        self.have = 0
        self.total: int | None = plan.model.size if plan.model.size_is == "exact" else None

    def resume(self) -> None:
        """Hash what an earlier pull left in the part; one larger than the file restarts."""
        size = os.fstat(self.fd).st_size
        if size > self.plan.model.max_bytes:
            self._restart()
            return
        os.lseek(self.fd, 0, os.SEEK_SET)
        while chunk := os.read(self.fd, CHUNK):
            self.hasher.update(chunk)
            self.have += len(chunk)
        self._report()

    def _restart(self) -> None:
        os.ftruncate(self.fd, 0)
        os.lseek(self.fd, 0, os.SEEK_SET)
        self.hasher = hashlib.sha256()
        self.have = 0

    def fetch(self, client: httpx.Client) -> None:
        url = self.plan.url
        for _ in range(MAX_REDIRECTS + 1):
            headers = {"Range": f"bytes={self.have}-"} if self.have else {}
            try:
                with client.stream("GET", url, headers=headers) as response:
                    if response.is_redirect:
                        url = self._next_hop(url, response.headers.get("location", ""))
                        continue
                    self._receive(url, response)
            except httpx.TransportError as exc:
                raise PullError(self._cut(str(exc) or type(exc).__name__)) from None
            if self.total and self.have < self.total:
                raise PullError(self._cut("the server sent no more"))
            return
        raise PullError(f"more than {MAX_REDIRECTS} redirects from {self.plan.url}: refused")

    def _next_hop(self, url: str, location: str) -> str:
        """Where a redirect leads: https anywhere, or plain http on the same server only."""
        target = urljoin(url, location)
        scheme, host, port = _origin(target)
        if scheme == "https" or (scheme == "http" and _origin(url) == (scheme, host, port)):
            return target
        raise PullError(
            f"refused a redirect from {urlsplit(url).netloc} to {target!r}: a download "
            "follows https, or plain http on the same server only"
        )

    def _receive(self, url: str, response: httpx.Response) -> None:
        if response.status_code == 416 and self.have:
            if self.total and self.have < self.total:
                self._restart()
                raise PullError(
                    f"the server refused to resume {self.plan.model.file} at byte "
                    f"{self.have:,}; the part was emptied: pull again"
                )
            return  # nothing after what the part holds: the hash decides
        if response.status_code not in (200, 206):
            raise PullError(
                f"{urlsplit(url).netloc} answered {response.status_code} "
                f"{response.reason_phrase} for {url}"
            )
        offered = self._offered(response)
        if offered is not None and offered > self.plan.model.max_bytes:
            raise PullError(
                f"the server offers {offered:,} bytes for {self.plan.model.file}; the catalog "
                f"allows at most {self.plan.model.max_bytes:,}: refused"
            )
        self.total = offered or self.total
        if response.status_code == 200 and self.have:
            self._restart()  # the server ignored the Range: start over from its first byte
        elif response.status_code == 206:
            self._check_range(response)
        self._report()
        for chunk in response.iter_raw():  # as it arrives: a cut loses nothing
            self._append(chunk)

    def _offered(self, response: httpx.Response) -> int | None:
        """The whole file's size as the response states it, if it does."""
        if response.status_code == 206:
            total = response.headers.get("content-range", "").rpartition("/")[2]
            return int(total) if total.isdigit() else None
        length = response.headers.get("content-length", "")
        return int(length) if length.isdigit() else None

    def _check_range(self, response: httpx.Response) -> None:
        unit, _, spec = response.headers.get("content-range", "").partition(" ")
        start = spec.partition("-")[0]
        if unit != "bytes" or not start.isdigit() or int(start) != self.have:
            self._restart()
            raise PullError(
                f"the server resumed {self.plan.model.file} at the wrong place "
                f"({response.headers.get('content-range', 'no Content-Range')!r}); the part "
                "was emptied: pull again"
            )

    def _append(self, chunk: bytes) -> None:
        room = self.plan.model.max_bytes - self.have
        if len(chunk) > room:
            self._restart()
            raise PullError(
                f"the server sent more than the {self.plan.model.max_bytes:,} bytes "
                f"{self.plan.model.file} may have: stopped, and the part was emptied"
            )
        _write_all(self.fd, chunk)
        self.hasher.update(chunk)
        self.have += len(chunk)
        self._report()

    def _report(self) -> None:
        if self.progress:
            self.progress(self.have, self.total)

    def _cut(self, why: str) -> str:
        of = f" of {self.total:,}" if self.total else ""
        return (
            f"the download of {self.plan.model.name} stopped at {self.have:,}{of} bytes "
            f"({why}); pulling it again resumes it"
        )


__all__ = [
    "LicenceNotAccepted",
    "NotDownloaded",
    "PullError",
    "UnknownModel",
    "downloaded_model",
    "page_of",
    "plan_pull",
    "pull",
]
