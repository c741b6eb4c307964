"""A self-signed certificate made at run time, for a fake served over HTTPS.

The corporate-proxy path (docs/reference/gateway-contract.md#through-a-corporate-proxy) puts a
TLS-intercepting forward
proxy between the gateway and the fake model; the proxy talks TLS to the fake, so the fake
serves HTTPS with a certificate made here. The key material lives in a temporary folder that
:meth:`SelfSignedCert.close` removes; nothing is written anywhere else. The certificate names
``127.0.0.1``, ``::1`` and ``localhost`` and is valid for a day; nothing verifies it but the
proxy (with ``ssl_insecure``), so it is not a CA and it is not trusted anywhere.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import ssl
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["SelfSignedCert"]


class SelfSignedCert:
    """A fresh key and self-signed certificate in a temporary folder."""

    def __init__(self, common_name: str = "streamproof-fake") -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="streamproof-tls-"))
        try:
            key = ec.generate_private_key(ec.SECP256R1())
            name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
            now = datetime.datetime.now(datetime.UTC)
            cert = (
                x509.CertificateBuilder()
                .subject_name(name)
                .issuer_name(name)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(
                    x509.SubjectAlternativeName(
                        [
                            x509.DNSName("localhost"),
                            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                            x509.IPAddress(ipaddress.ip_address("::1")),
                        ]
                    ),
                    critical=False,
                )
                .sign(key, hashes.SHA256())
            )
            self.cert_path = self.folder / "cert.pem"
            self.key_path = self.folder / "key.pem"
            self.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
            self.key_path.write_bytes(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
            self.key_path.chmod(0o600)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def server_context(self) -> ssl.SSLContext:
        """A server-side TLS context presenting the certificate."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert_path, self.key_path)
        return context

    def close(self) -> None:
        """Remove the key material."""
        shutil.rmtree(self.folder, ignore_errors=True)
