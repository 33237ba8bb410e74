"""What a job proposed, sealed so that only what co-tui filed can be approved.

Each proposal is signed when it is filed: an Ed25519 signature (the `cryptography` package)
over the job, slot and position, the workspace, the session and call, the tool, the SHA-256
of the exact arguments, a random nonce, an expiry and the signing key's id. Before anything runs the
signature is checked against the current key and the arguments against their hash, so a row
that something else wrote or edited in `jobs.db` approves nothing, and rotating the key voids
every proposal still waiting. Each nonce is used once: it is written, before the call runs,
to a list beside the key (a writer of the database that cannot write the config folder, a
synced copy of it, cannot make an approved proposal wait again).

The key is `inbox.key` in the config folder (0600). It stops writers that cannot read it:
the sandbox, a synced or copied database. A process running as you can read it.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from co_tui.protocol.frontend import args_hash

KEY_NAME = "inbox.key"
USED_NAME = "inbox-used-nonces"
LIFETIME = timedelta(days=3)  # a proposal not decided by then has expired


def key_path() -> Path:
    from co_tui.config.paths import user_config_dir

    return user_config_dir() / KEY_NAME


@dataclass(frozen=True)
class Seal:
    nonce: str
    expires: datetime
    key_id: str
    signature: str  # base64

    @property
    def short_id(self) -> str:
        """How the inbox names the proposal: the nonce's first 10 characters."""
        return self.nonce[:10]


@dataclass(frozen=True)
class Sealed:
    """The fields a seal covers."""

    job_id: str
    slot: str
    position: int
    workspace: str  # where it runs: the jobs table is not signed
    session_id: str
    tool_call_id: str
    tool_name: str
    args_hash: str


class SigningKey:
    """The per-user key that seals and checks proposals."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or key_path()
        self._key = self._load_or_create()

    def _load_or_create(self) -> Ed25519PrivateKey:
        from co_tui.safety.private_files import private_dir

        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return self._write_new()
        key = serialization.load_pem_private_key(data, password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError(f"{self.path} does not hold an Ed25519 key")
        private_dir(self.path.parent)
        return key

    def _write_new(self) -> Ed25519PrivateKey:
        from co_tui.safety.private_files import private_dir

        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        private_dir(self.path.parent)
        fresh = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
        os.replace(fresh, self.path)
        return key

    def rotate(self) -> str:
        """A new key; every proposal signed by the old one is void. Returns its id."""
        self._key = self._write_new()
        return self.key_id

    @property
    def key_id(self) -> str:
        raw = self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return hashlib.sha256(raw).hexdigest()[:16]

    def seal(self, what: Sealed, now: datetime, lifetime: timedelta = LIFETIME) -> Seal:
        nonce = secrets.token_hex(16)
        expires = now + lifetime
        signature = self._key.sign(_message(what, nonce, expires, self.key_id))
        return Seal(nonce, expires, self.key_id, base64.b64encode(signature).decode())

    def refusal(
        self, what: Sealed, args: dict[str, object], seal: Seal, now: datetime
    ) -> str | None:
        """Why `what` (with `args` as stored) may not run, or None when it may."""
        if args_hash(args) != what.args_hash:
            return "its arguments were changed after it was filed"
        if seal.key_id != self.key_id:
            return "it was signed by a key that has been rotated since: it is void"
        try:
            signature = base64.b64decode(seal.signature, validate=True)
            message = _message(what, seal.nonce, seal.expires, seal.key_id)
            self._key.public_key().verify(signature, message)
        except (InvalidSignature, ValueError):
            return "its signature does not match: co-tui did not file it like this"
        if now >= seal.expires:
            return f"it expired at {seal.expires.astimezone():%Y-%m-%d %H:%M %Z}"
        if self.used(seal.nonce):
            return "it was decided before (its nonce is used)"
        return None

    @property
    def _used_path(self) -> Path:
        return self.path.with_name(USED_NAME)

    def used(self, nonce: str) -> bool:
        try:
            return nonce in self._used_path.read_text().split()
        except FileNotFoundError:
            return False

    def use(self, nonce: str) -> bool:
        """Record `nonce` as used; False when it already was (another process won)."""
        from co_tui.safety.private_files import open_private

        with open_private(self._used_path, "a") as out:
            fcntl.flock(out.fileno(), fcntl.LOCK_EX)
            if self.used(nonce):
                return False
            out.write(nonce + "\n")
            out.flush()
            os.fsync(out.fileno())
        return True


def _message(what: Sealed, nonce: str, expires: datetime, key_id: str) -> bytes:
    fields = {
        "job": what.job_id,
        "slot": what.slot,
        "position": what.position,
        "workspace": what.workspace,
        "session": what.session_id,
        "call": what.tool_call_id,
        "tool": what.tool_name,
        "args_sha256": what.args_hash,
        "nonce": nonce,
        "expires": expires.astimezone(UTC).isoformat(),
        "key": key_id,
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
