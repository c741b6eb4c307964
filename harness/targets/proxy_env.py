"""The environment that puts a target behind a forward proxy (README, "Through a corporate
proxy"): what the harness sets so a target's HTTP clients go through the proxy."""

from __future__ import annotations

__all__ = ["proxy_environment"]


def proxy_environment(proxy_url: str, ca_file: str | None = None) -> dict[str, str]:
    """The proxy for both schemes in both spellings, ``NO_PROXY`` emptied (an inherited one
    must not exempt the fakes on loopback) and, when the proxy intercepts TLS, its CA as the
    only trusted one (``SSL_CERT_FILE``)."""
    env = {
        "HTTPS_PROXY": proxy_url,
        "HTTP_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "http_proxy": proxy_url,
        "NO_PROXY": "",
        "no_proxy": "",
    }
    if ca_file is not None:
        env["SSL_CERT_FILE"] = ca_file
    return env
