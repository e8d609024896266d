"""A local certificate authority for the replay proxy's https tunnels.

Clients reach ``https://`` URLs through the proxy with ``CONNECT host:443``;
the replay server then speaks TLS itself, so it needs a certificate for that
host which the client trusts. ``LocalCA`` makes one CA per directory (reused
when the directory already holds one) and a leaf certificate per host, signed
by it. EC P-256 keys: generating one takes about a millisecond, RSA 2048 about
a hundred.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from focuscrawl.exceptions import ConfigError

CA_CERT_NAME = "replay-ca.pem"
CA_KEY_NAME = "replay-ca-key.pem"


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "focuscrawl replay"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64]),
        ]
    )


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


class LocalCA:
    """A CA in ``directory`` and a cache of per-host server SSL contexts."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.cert_path = self.directory / CA_CERT_NAME
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._key, self._cert = self._load_or_create()

    def _load_or_create(self) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key_path = self.directory / CA_KEY_NAME
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if self.cert_path.is_file() and key_path.is_file():
                key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
                cert = x509.load_pem_x509_certificate(self.cert_path.read_bytes())
                if isinstance(key, ec.EllipticCurvePrivateKey):
                    return key, cert
            return self._create(key_path)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.directory}: cannot set up the replay CA ({exc})") from None

    def _create(self, key_path: Path) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        name = _name("focuscrawl replay CA")
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .sign(key, hashes.SHA256())
        )
        key_path.write_bytes(_pem_key(key))
        key_path.chmod(0o600)
        self.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return key, cert

    def context_for(self, host: str) -> ssl.SSLContext:
        """A server-side SSL context presenting a certificate for ``host``."""
        host = host.lower()
        context = self._contexts.get(host)
        if context is None:
            context = self._make_context(host)
            self._contexts[host] = context
        return context

    def _make_context(self, host: str) -> ssl.SSLContext:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        alt: x509.GeneralName
        try:
            alt = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            alt = x509.DNSName(host)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(host))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), False
            )
            .sign(self._key, hashes.SHA256())
        )
        # ssl only loads chains from files; one file per host, next to the CA
        safe = "".join(c if c.isalnum() or c in ".-" else "_" for c in host)
        chain_path = self.directory / f"host-{safe}.pem"
        chain_path.write_bytes(
            _pem_key(key)
            + cert.public_bytes(serialization.Encoding.PEM)
            + self._cert.public_bytes(serialization.Encoding.PEM)
        )
        chain_path.chmod(0o600)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain_path)
        return context
