"""One redactor for everything co-tui writes down: spans, session rows, the prompt history,
memories.

Three kinds of secret become `[REDACTED]`:
- configured secrets (Settings.secret_values()), as written and in every escaped form they
  take in JSON text and error messages;
- strings shaped like credentials (SHAPES), whether configured here or not;
- payment card numbers: 13 to 19 digits that start as a card network's do (2-6), together
  or in groups split by spaces or dashes, and pass the Luhn check.

Text is scanned once for anchors (the literals every shape starts with or contains, and the
configured secrets, as one trie-shaped expression); only the shapes whose anchors occur then
run, each starting with a literal the engine searches for. Card numbers have no literal:
one more scan looks for them. Text without a secret costs those two scans. A redacted
stretch never holds a quote and takes whole backslash escapes, so JSON text stays JSON
(`json_text` mends the rest); strings that hold JSON (pydantic-ai stores messages and tool
arguments as JSON text, sometimes inside JSON) are redacted leaf by leaf by `value()`.

The shapes follow Yelp's detect-secrets plugins where one exists (named per pattern). The
package itself is not used: importing its plugins costs ~110 ms (they import `requests` and
its scan machinery), and its patterns mark where a secret starts rather than cover all of it
(the JWT signature, the lines of a private key block).
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 4


@dataclass(frozen=True)
class Shape:
    """One credential shape. The pattern runs only on text holding one of its anchors (a
    literal every match starts with or contains). A group named `keep` is kept (the user
    name in a URL, the word Bearer, the name in name=value); the rest of a match is replaced."""

    name: str
    pattern: str
    anchors: tuple[str, ...]
    folded: bool = False  # pattern and anchors in lower case, matched on the lower-cased text


# A value assigned to a telling name: what follows the name, and the value itself (4+
# characters without spaces, quotes or delimiters).
_QUOTE = r"(?:\\*[\"'])?"  # a quote, maybe JSON-escaped (never a backslash alone)
_ASSIGN = rf"[a-z0-9_]{{0,30}}{_QUOTE}\s*(?::=|[:=])\s*{_QUOTE}"
_VALUE = r"(?!(?:null|true|false|none)\b)[^\s\"'`\\,;&<>()\[\]{}]{4,}"
_KEY_WORDS = ("api", "auth", "access", "private", "client")


def _starts_word(literal: str, word: str) -> str:
    """`literal` where it starts a word: not after a `word` character, except as the `n` of a
    JSON-escaped line break or tab (\\n, \\t in JSON text). Look-behinds come after the
    literal, so the engine still searches for the literal first."""
    lit = re.escape(literal)
    return rf"{lit}(?:(?<!{word}{lit})|(?<=\\[nrt]{lit}))"


def _starts_word_any(literals: tuple[str, ...], word: str) -> str:
    return "(?:" + "|".join(_starts_word(literal, word) for literal in literals) + ")"


_VAULT_PREFIXES = ("hvs.", "hvb.", "hvr.")
_MYSQL_PROGRAMS = ("mysql", "mariadb")
_MYSQL_START = _starts_word_any(_MYSQL_PROGRAMS, r"[\w.-]")
# A command-line password value: inside the quotes it starts after, or up to a blank.
_ARGUMENT_VALUE = r"""(?:(?<=')[^'\n\\]+|(?<=")[^"\n\\]+|(?<!["'])[^\s"'`\\;&|<>]+)"""


SHAPES: tuple[Shape, ...] = (
    # PEM, OpenSSH and PGP private key blocks, BEGIN line to END line (detect-secrets'
    # PrivateKeyDetector finds the BEGIN line). Line breaks may be real or JSON escapes;
    # a block cut before its END line ends where its base64 does.
    Shape(
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:\\+[nrt]|[A-Za-z0-9+/=\s:,.-])*?"
        r"(?:-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"|(?!\\+[nrt]|[A-Za-z0-9+/=\s:,.-]))",
        ("-----BEGIN",),
    ),
    # JSON Web Tokens: a base64url JSON header (eyJ = '{"'), payload, signature, and the
    # extra parts of a JWE (detect-secrets' JwtTokenDetector; here the whole token).
    Shape(
        "jwt",
        _starts_word("eyJ", "[A-Za-z0-9_-]")
        + r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+){0,3}",
        ("eyJ",),
    ),
    # A password in a URL, scheme://user:password@host (detect-secrets' BasicAuthDetector);
    # the user name and the host are kept.
    Shape(
        "url_password",
        r"(?P<keep>://[^\s:/?#\[\]@\"'\\]*:)[^\s:/?#\[\]@\"'\\]+(?=@)",
        ("://",),
    ),
    # AWS access key ids (detect-secrets' AWSKeyDetector), and the 40-character secret
    # access key printed within 100 characters after one (credentials files, CSV exports,
    # `aws configure`); what lies between them is kept. A secret key has both cases, so a
    # git hash (lower-case hex) next to a key id is left alone.
    Shape(
        "aws",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)(?<![A-Z0-9][A-Z0-9]{4})[A-Z0-9]{16}(?![A-Z0-9])"
        r"(?:(?P<keep>[\s\S]{1,100}?)(?:(?<![A-Za-z0-9/+])|(?<=\\[nrt]))"
        r"(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[A-Z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))?",
        ("A3T", "AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    # Google: API keys (AIza…), OAuth access tokens (ya29.…), OAuth refresh tokens (1//…)
    # and OAuth client secrets (GOCSPX-…), as google-auth and the Cloud console write them.
    Shape("google_api_key", r"AIza[0-9A-Za-z_-]{30,}", ("AIza",)),
    Shape("google_access_token", r"ya29\.[0-9A-Za-z_-]{20,}", ("ya29.",)),
    Shape("google_refresh_token", _starts_word("1//", r"[\w/]") + r"[0-9A-Za-z_-]{20,}", ("1//",)),
    Shape("google_client_secret", r"GOCSPX-[0-9A-Za-z_-]{20,}", ("GOCSPX-",)),
    # Slack bot/user/app tokens and incoming-webhook paths (detect-secrets' SlackDetector).
    Shape("slack", r"xox[abeoprs]-[A-Za-z0-9-]{8,}|xapp-[0-9]+-[A-Za-z0-9-]{8,}", ("xox", "xapp-")),
    Shape(
        "slack_webhook",
        r"(?P<keep>hooks\.slack\.com/services/)T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
        ("hooks.slack.com/",),
    ),
    # GitHub tokens: ghp_, gho_, ghu_, ghs_, ghr_ and fine-grained github_pat_
    # (detect-secrets' GitHubTokenDetector).
    Shape(
        "github",
        r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    # GitLab, npm, PyPI and Stripe keys (detect-secrets' GitLabTokenDetector, NpmDetector,
    # PypiTokenDetector, StripeDetector).
    Shape("gitlab", r"glpat-[A-Za-z0-9_-]{20,}", ("glpat-",)),
    Shape("npm", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    Shape("pypi", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", ("pypi-",)),
    Shape("stripe", r"[rs]k_(?:live|test)_[0-9A-Za-z]{20,}", ("k_live_", "k_test_")),
    # HashiCorp Vault service, batch and recovery tokens (hvs., hvb., hvr.).
    Shape(
        "vault",
        _starts_word_any(_VAULT_PREFIXES, "[A-Za-z0-9_]") + r"[A-Za-z0-9_-]{24,}",
        _VAULT_PREFIXES,
    ),
    # Azure connection strings: the storage AccountKey and the Service Bus / Event Hubs
    # SharedAccessKey (base64); SharedAccessKeyName, the key's name, is kept.
    Shape(
        "azure_key",
        rf"(?P<keep>{_starts_word_any(('accountkey', 'sharedaccesskey'), '[a-z0-9_]')}\s*=\s*)"
        r"[a-z0-9+/]{16,}={0,2}",
        ("accountkey", "sharedaccesskey"),
        folded=True,
    ),
    # The password on a mysql or mariadb command line (mysqldump, mariadb-dump, mysqladmin…):
    # `-p<password>` (attached: `-p` alone asks for it) and `--password=<password>`, quoted
    # or not.
    Shape(
        "mysql_password",
        rf"(?P<keep>{_MYSQL_START}[\w-]*"
        rf"(?:[^\S\n][^\n;|&]*?)?[^\S\n](?:-p|--password=){_QUOTE}){_ARGUMENT_VALUE}",
        _MYSQL_PROGRAMS,
    ),
    # OpenAI and Anthropic style keys: sk-…, sk-proj-…, sk-ant-api03-… A key has a known
    # prefix or a digit or capital; `sk-learn-compatible` and `task-list` are words.
    Shape(
        "sk_key",
        _starts_word("sk-", "[A-Za-z0-9]") + r"(?:(?:proj|ant|svcacct|admin|or)-[A-Za-z0-9_-]{16,}"
        r"|(?=[a-z_-]*[A-Z0-9])[A-Za-z0-9_-]{16,})",
        ("sk-",),
    ),
    # The credential after "Bearer" (Authorization headers, curl -H); it holds a digit, so
    # "the bearer instruments" stays.
    Shape(
        "bearer",
        rf"(?P<keep>{_starts_word('bearer', '[a-z0-9_]')}\s+)"
        r"(?=[a-z._~+/=-]*[0-9])[a-z0-9._~+/=-]{8,}",
        ("bearer",),
        folded=True,
    ),
    # HTTP basic credentials: Authorization: Basic <base64>.
    Shape(
        "basic_auth",
        rf"(?P<keep>authorization{_QUOTE}\s*[:=]\s*{_QUOTE}basic\s+)[a-z0-9+/]{{8,}}={{0,2}}",
        ("authorization",),
        folded=True,
    ),
    # A value assigned to a telling name: password=…, "client_secret": "…", API_KEY: …,
    # token=… (detect-secrets' KeywordDetector word list, plus token; `tokens=` and
    # `token_count:` are not it). The name is kept.
    Shape("password", rf"(?P<keep>passw(?:or)?d{_ASSIGN}){_VALUE}", ("passw",), folded=True),
    Shape("secret", rf"(?P<keep>secret{_ASSIGN}){_VALUE}", ("secret",), folded=True),
    Shape(
        "token",
        rf"(?P<keep>token{_QUOTE}\s*(?::=|[:=])\s*{_QUOTE}){_VALUE}",
        ("token",),
        folded=True,
    ),
    Shape(
        "key",
        rf"(?P<keep>(?:(?:{'|'.join(_KEY_WORDS)})_?key(?!_?name\b)|db_?pass){_ASSIGN}){_VALUE}",
        (*(f"{w}{sep}key" for w in _KEY_WORDS for sep in ("_", "")), "db_pass", "dbpass"),
        folded=True,
    ),
)
_MAX_JSON_DEPTH = 6
_HEX = frozenset("0123456789abcdefABCDEF")

# A payment card number: 13-19 digits, the first 2-6 (Visa, Mastercard, Amex, Discover, JCB,
# Diners, UnionPay, Maestro), either together or in groups of 3-6 split by one separator
# (a space or a dash), and not part of a longer number, a decimal or a word.
# The look-behinds follow the first digit, so the engine tries them at digits only.
_CARD = re.compile(
    r"[2-6](?:(?<![\w.,+-][2-6])|(?<=\\[nrt][2-6]))"
    r"(?:\d{12,18}|\d{2,5}(?P<sep>[ -])\d{3,6}(?:(?P=sep)\d{3,6}){1,4})"
    r"(?!\w|[.,-]\d)"
)
_CARD_DIGITS = range(13, 20)


def _luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _is_card(number: str) -> bool:
    digits = number.replace(" ", "").replace("-", "")
    return len(digits) in _CARD_DIGITS and _luhn_valid(digits)


def _redact_cards(text: str) -> str:
    """`text` with each card number replaced; the same object when it holds none."""
    pieces: list[str] = []
    pos = 0
    for match in _CARD.finditer(text):
        if _is_card(match.group()):
            pieces += (text[pos : match.start()], REDACTED)
            pos = match.end()
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


def _escaped_forms(secret: str) -> set[str]:
    """The secret as written and as repr writes it (error messages), each as JSON escapes
    it once and twice (tool arguments inside messages)."""
    forms: set[str] = set()
    for base in (secret, repr(secret)[1:-1], secret.encode("unicode_escape").decode("ascii")):
        once = json.dumps(base)[1:-1]
        forms |= {base, once, json.dumps(once)[1:-1], json.dumps(base, ensure_ascii=False)[1:-1]}
    return forms


def _escaped(text: str, pos: int) -> bool:
    """text[pos] follows an odd run of backslashes: the second character of an escape."""
    run = 0
    while pos - run > 0 and text[pos - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _escape_at(text: str, pos: int) -> tuple[int, int] | None:
    """The span of the backslash escape (\\n, \\", \\uXXXX) that text[pos] continues, if any:
    a redacted stretch takes whole escapes, so JSON text stays JSON."""
    if pos >= len(text):
        return None
    if _escaped(text, pos):
        return pos - 1, pos + (5 if text[pos] == "u" else 1)
    for back in range(1, 5):
        u = pos - back
        if u < 1:
            break
        if text[u] == "u" and _escaped(text, u) and all(c in _HEX for c in text[u + 1 : pos + 1]):
            return u - 1, u + 5
    return None


@functools.cache
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def _redact(pattern: re.Pattern[str], text: str, source: str) -> str:
    """Replace every match of `pattern` in `source` (the text, or the text lower-cased to the
    same length) in `text`, but for the match's `keep` group."""
    pieces: list[str] = []
    pos = 0
    keeps = "keep" in pattern.groupindex
    for match in pattern.finditer(source):
        start, end = match.span()
        keep_start, keep_end = match.span("keep") if keeps else (-1, -1)
        stretches = [(start, end)] if keep_start < 0 else [(start, keep_start), (keep_end, end)]
        for a, b in stretches:
            if a >= b:
                continue
            if (escape := _escape_at(text, a)) is not None:
                a = escape[0]
            if (escape := _escape_at(text, b)) is not None and escape[0] < b:
                b = escape[1]
            a = max(a, pos)
            pieces += (text[pos:a], REDACTED)
            pos = b
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


def _trie(words: Iterable[str]) -> str:
    """One regular expression matching any of `words`, as a trie: at each position the
    engine follows one branch per character instead of trying every word."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + build(node[char]) for char in sorted(node) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(root)


def _overlaps(a: str, b: str) -> bool:
    """An occurrence of `b` may hide inside or after a match of `a` that starts earlier."""
    return b in a or any(a.endswith(b[:n]) for n in range(1, len(b)))


@functools.cache
def _trigger(literal: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, frozenset[int]]]:
    """The anchors of every shape and the configured secrets (index -1), case-folded, as one
    pattern; and for each anchor found, the shapes to run. A found anchor also stands for any
    anchor a non-overlapping scan could have stepped over inside or just after it."""
    index: dict[str, set[int]] = {}
    for i, shape in enumerate(SHAPES):
        for anchor in shape.anchors:
            index.setdefault(anchor.casefold(), set()).add(i)
    for form in literal:
        index.setdefault(form.casefold(), set()).add(-1)
    return re.compile(_trie(index)), _ShapesFor(index)


class _ShapesFor(dict[str, frozenset[int]]):
    """anchor: the shapes to run when a text holds it. Worked out for an anchor the first
    time one is found (every pair of anchors would cost milliseconds at start-up)."""

    def __init__(self, index: dict[str, set[int]]) -> None:
        super().__init__()
        self._index = index

    def __missing__(self, anchor: str) -> frozenset[int]:
        shapes = frozenset(
            i for b, found in self._index.items() if _overlaps(anchor, b) for i in found
        )
        self[anchor] = shapes
        return shapes


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        literal = sorted(
            {v for s in secrets if s and len(s) >= MIN_SECRET_CHARS for v in _escaped_forms(s)},
            key=len,
            reverse=True,
        )
        self._configured = re.compile("|".join(map(re.escape, literal))) if literal else None
        self._trigger, self._wanted = _trigger(tuple(literal))

    def text(self, value: str) -> str:
        return _redact_cards(self._shapes(value))

    def _shapes(self, value: str) -> str:
        found = set(self._trigger.findall(value.casefold()))
        if not found:
            return value
        wanted = frozenset().union(*(self._wanted[a] for a in found))
        if -1 in wanted and self._configured is not None:
            value = _redact(self._configured, value, value)
        lowered: str | None = None
        for i, shape in enumerate(SHAPES):
            if i not in wanted:
                continue
            if not shape.folded:
                value = _redact(_compiled(shape.pattern), value, value)
                continue
            lowered = value.lower() if lowered is None else lowered
            if len(lowered) != len(value):  # a character lower-cased to two: match in place
                value = _redact(_compiled(shape.pattern, re.IGNORECASE), value, value)
                continue
            redacted = _redact(_compiled(shape.pattern), value, lowered)
            if redacted is not value:
                value, lowered = redacted, None
        return value

    def json_text(self, text: str) -> str:
        """JSON text in, JSON text out. A configured secret can look like a JSON number or
        literal (an MCP server's env value "8080" or "true"); where replacing it in the text
        would break the JSON, the document is redacted leaf by leaf instead."""
        redacted = self.text(text)
        if redacted is text:
            return text
        try:
            json.loads(redacted)
        except ValueError:
            try:
                parsed = json.loads(text)
            except ValueError:
                return redacted  # not JSON to begin with
            return json.dumps(self.value(parsed), ensure_ascii=False)
        return redacted

    def value(self, value: Any, depth: int = 0) -> Any:
        """Redact any JSON-like value; strings holding JSON are redacted inside and re-encoded."""
        if isinstance(value, str):
            return self._string(value, depth)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v, depth) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v, depth) for v in value]
        return value

    def _string(self, value: str, depth: int) -> str:
        # Every form a secret takes in JSON text (as written, escaped once or twice) is
        # matched, so a string without a hit needs no parsing.
        redacted = self.text(value)
        if redacted is value:
            return value
        stripped = value.lstrip()
        if depth < _MAX_JSON_DEPTH and stripped[:1] in ("{", "[", '"'):
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                parsed = None
            else:
                structured = isinstance(parsed, dict | list)
                if (structured or (isinstance(parsed, str) and parsed != value)) and (
                    leaves := self.value(parsed, depth + 1)
                ) != parsed:
                    return json.dumps(leaves, ensure_ascii=False)
        return redacted


# -- the process's configured secrets, for writers that are not handed Settings ----------

_lock = threading.Lock()
_remembered: set[str] = set()
_shared: Redactor | None = None


def remember_secrets(values: Iterable[str]) -> None:
    """Add configured secrets to those `shared_redactor()` replaces (start-up does this)."""
    global _shared
    with _lock:
        new = {v for v in values if v and len(v) >= MIN_SECRET_CHARS} - _remembered
        if new:
            _remembered.update(new)
            _shared = None


def shared_redactor() -> Redactor:
    """Credential shapes and every secret remembered in this process."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = Redactor(_remembered)
        return _shared
