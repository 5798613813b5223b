"""Starting the test identity providers (their own processes) and the keys they sign with.

Each provider binds a free port of 127.0.0.1 itself and prints ``LISTENING <port>``: the test waits for that line
(tests.waiting.wait_for, with the process's output as progress), never for a fixed time. Keys and certificates
are generated here, at test time; nothing secret is committed.
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
OIDC_MODES = ("good", "expired", "wrongaud", "wrongiss", "badsig", "badnonce")
OIDC_USER = {"username": "ada.oidc", "password": "provider-password-1", "email": "ada@hospital.example"}
SAML_USERS = {
    "bob.saml": {
        "password": "idp-password-1",
        "nameid": "bob-persistent-7f3a",
        "email": "bob@hospital.example",
        "givenName": "Bob",
        "sn": "Saml",
    }
}


def rsa_key_pem() -> tuple[rsa.RSAPrivateKey, bytes]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return key, pem


def self_signed_cert(key: rsa.RSAPrivateKey, common_name: str) -> bytes:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class Running:
    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def _started(args: list[str], env: dict[str, str], what: str) -> Iterator[Running]:
    process = subprocess.Popen(
        args, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    running = Running(process)

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            running.lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def listening() -> int:
        if process.poll() is not None:
            raise AssertionError(f"{what} exited with {process.returncode}:\n" + "\n".join(running.lines[-40:]))
        for line in running.lines:
            if line.startswith("LISTENING "):
                return int(line.split()[1])
        return 0

    try:
        running.port = wait_for(
            listening,
            what=f"{what} to listen",
            progress=lambda: len(running.lines),
            report=lambda: "\n".join(running.lines[-40:]),
        )
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class OidcProviderInfo:
    running: Running
    issuer: str
    discovery: dict
    client_secret: str

    def concord_settings(self, modes: tuple[str, ...] = OIDC_MODES) -> dict:
        """The value of CONCORD_OIDC_PROVIDERS (decoded) for these clients, from the provider's discovery document."""
        d = self.discovery
        return {
            mode: {
                "label": "Hospital (OIDC)" if mode == "good" else f"Test {mode}",
                "issuer": d["issuer"],
                "client_id": f"concord-{mode}",
                "client_secret": self.client_secret,
                "authorization_endpoint": d["authorization_endpoint"],
                "token_endpoint": d["token_endpoint"],
                "jwks_uri": d["jwks_uri"],
            }
            for mode in modes
        }


@contextmanager
def oidc_provider(workdir: Path) -> Iterator[OidcProviderInfo]:
    _, pem = rsa_key_pem()
    secret = secrets.token_urlsafe(24)
    env = {
        "OIDC_PROVIDER_DB": str(workdir / "oidc-provider.sqlite3"),
        "OIDC_PROVIDER_RSA_KEY": pem.decode(),
        "OIDC_PROVIDER_CLIENT_SECRET": secret,
        "OIDC_PROVIDER_MODES": ",".join(OIDC_MODES),
        "OIDC_PROVIDER_USER": OIDC_USER["username"],
        "OIDC_PROVIDER_PASSWORD": OIDC_USER["password"],
        "OIDC_PROVIDER_EMAIL": OIDC_USER["email"],
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    args = [sys.executable, "-m", "tests.sso.oidc_provider.serve"]
    with _started(args, env, "the OIDC provider") as running:
        discovery = httpx.get(f"{running.base}/o/.well-known/openid-configuration/").raise_for_status().json()
        yield OidcProviderInfo(running, discovery["issuer"], discovery, secret)


@dataclass
class SamlIdpInfo:
    running: Running
    entity_id: str
    metadata_file: Path
    cert_pem: bytes

    def concord_settings(self, *, use_url: bool = False) -> dict:
        source = (
            {"metadata_url": f"{self.running.base}/idp/metadata"}
            if use_url
            else {"metadata_file": str(self.metadata_file)}
        )
        return {
            "hospital-saml": {
                "label": "Hospital (SAML)",
                "entity_id": self.entity_id,
                **source,
                "username_attribute": "uid",
                "email_attribute": "mail",
                "first_name_attribute": "givenName",
                "last_name_attribute": "sn",
            }
        }


@contextmanager
def saml_idp(workdir: Path) -> Iterator[SamlIdpInfo]:
    key, pem = rsa_key_pem()
    cert = self_signed_cert(key, "concord-test-idp")
    (workdir / "idp.key").write_bytes(pem)
    (workdir / "idp.crt").write_bytes(cert)
    env = {
        "SAML_IDP_KEY_FILE": str(workdir / "idp.key"),
        "SAML_IDP_CERT_FILE": str(workdir / "idp.crt"),
        "SAML_IDP_USERS": json.dumps(SAML_USERS),
        "PYTHONPATH": str(ROOT),
    }
    args = [sys.executable, "-m", "tests.sso.saml_idp.serve"]
    with _started(args, env, "the SAML IdP") as running:
        metadata = httpx.get(f"{running.base}/idp/metadata").raise_for_status().text
        metadata_file = workdir / "idp-metadata.xml"
        metadata_file.write_text(metadata)
        yield SamlIdpInfo(running, f"{running.base}/idp/metadata", metadata_file, cert)
