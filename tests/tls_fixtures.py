"""Certificates for TLS tests: a CA of the test's own, a server certificate for 127.0.0.1 and a client one.

Made with ``cryptography`` (P-256 keys, valid one day), written as PEM files in a directory of the test's own.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["TLSFiles", "make_tls_files"]


@dataclass(frozen=True)
class TLSFiles:
    """PEM files: the CA's certificate, the server's and the client's certificate and key."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def make_tls_files(directory: Path) -> TLSFiles:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpkit test CA")])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_SIGNS_CERTIFICATES, critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    files = TLSFiles(*(directory / name for name in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")))
    _write(files.ca, ca.public_bytes(serialization.Encoding.PEM))
    for cert_path, key_path, usage, names in (
        # A Redis Cluster node also presents its certificate to the other nodes, as a client.
        (files.server_cert, files.server_key, [_SERVER, _CLIENT], [x509.IPAddress(_LOOPBACK)]),
        (files.client_cert, files.client_key, [_CLIENT], [x509.DNSName("client")]),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, str(names[0].value))])
        cert = (
            _builder(subject, ca_name, key.public_key())
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
        _write(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return files


_LOOPBACK = ipaddress.ip_address("127.0.0.1")
_SERVER, _CLIENT = ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH
_SIGNS_CERTIFICATES = x509.KeyUsage(
    digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
    key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False,
)  # fmt: skip


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    path.chmod(0o600)
