"""The credential shapes added to the redactor (co_tui/safety/redaction.py): HashiCorp Vault tokens,
Azure connection string keys, mysql/mariadb passwords on the command line and payment card
numbers. Each case holds the secret and a look-alike that must stay, in one text."""

from __future__ import annotations

import json

import pytest

from co_tui.safety.redaction import Redactor

AZURE_STORAGE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
SERVICE_BUS_KEY = "abcdEFGH1234ijklMNOP5678qrstUVWX90yzAB+/cd="
VAULT_SERVICE = "hvs.CAESIJlWh8D3Jx0eK0SAbCdEfGhIjKlMnOpQrStUvWxYz"
VAULT_BATCH = "hvb.AAAAAQJ0aW1lc3RhbXAtYmF0Y2gtdG9rZW4"
VAULT_RECOVERY = "hvr.AbCdEfGhIjKlMnOpQrStUvWx12"

# text -> the text once redacted
CASES: dict[str, str] = {
    # Vault: the bare token, not a word that merely starts so, nor a short one
    f"vault login {VAULT_SERVICE} (not hvs.short)": "vault login [REDACTED] (not hvs.short)",
    f"{VAULT_BATCH} {VAULT_RECOVERY} thvs.CAESIJlWh8D3Jx0eK0SAbCdEfGh": (
        "[REDACTED] [REDACTED] thvs.CAESIJlWh8D3Jx0eK0SAbCdEfGh"
    ),
    # Azure storage: the key goes, the account name and endpoint stay
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;"
        f"AccountKey={AZURE_STORAGE_KEY};EndpointSuffix=core.windows.net"
    ): (
        "DefaultEndpointsProtocol=https;AccountName=acct;"
        "AccountKey=[REDACTED];EndpointSuffix=core.windows.net"
    ),
    # Service Bus: SharedAccessKey goes, SharedAccessKeyName (the key's name) stays
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={SERVICE_BUS_KEY}"
    ): (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        "SharedAccessKey=[REDACTED]"
    ),
    # mysql and mariadb: -p<password> attached (-p alone asks; -P is the port), --password=
    "mysql -p shop; mysql -uroot -P 3306 -phunter2 shop": (
        "mysql -p shop; mysql -uroot -P 3306 -p[REDACTED] shop"
    ),
    "mysqldump -u root -p'my pw' shop > dump.sql": (
        "mysqldump -u root -p'[REDACTED]' shop > dump.sql"
    ),
    "/usr/bin/mariadb --password=pw1 -e 'select 1'": (
        "/usr/bin/mariadb --password=[REDACTED] -e 'select 1'"
    ),
    'mariadb-dump --password="s3 cret" db; grep -pattern x': (
        'mariadb-dump --password="[REDACTED]" db; grep -pattern x'
    ),
    # cards: Visa, Amex and Mastercard numbers that pass the Luhn check, together or in
    # groups; a number that fails it, a millisecond timestamp, a decimal stay
    (
        "visa 4111 1111 1111 1111, amex 3782-822463-10005, mc 5555555555554444; "
        "not 4111 1111 1111 1112, 1712345678901, 0.4111111111111111, id_4111111111111111"
    ): (
        "visa [REDACTED], amex [REDACTED], mc [REDACTED]; "
        "not 4111 1111 1111 1112, 1712345678901, 0.4111111111111111, id_4111111111111111"
    ),
}


@pytest.mark.parametrize("text", list(CASES))
def test_the_secret_goes_and_its_look_alike_stays(text: str) -> None:
    out = Redactor().text(text)
    assert out == CASES[text]
    assert Redactor().text(out) == out  # redacting twice changes nothing


@pytest.mark.parametrize(
    "value",
    [
        {"cmd": "mysql -uroot -p'pa ss' db", "card": "4111-1111-1111-1111"},
        {"env": f"VAULT={VAULT_SERVICE}", "conn": f"AccountKey={AZURE_STORAGE_KEY};x=1"},
    ],
)
def test_json_text_stays_json(value: dict[str, str]) -> None:
    text = json.dumps(json.dumps(value))  # as tool arguments are stored inside messages
    out = Redactor().json_text(text)
    inner = json.loads(json.loads(out))
    assert set(inner) == set(value)
    assert all("[REDACTED]" in v for v in inner.values()), inner
