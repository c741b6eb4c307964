"""The fault links of one gateway and the engines that carry them.

The model link stands between the gateway and the fake model: a reverse proxy the gateway is
pointed at, or on a corporate-proxy path a forward proxy that intercepts TLS
(docs/reference/gateway-contract.md#through-a-corporate-proxy). The browser link stands between
the harness (the browser) and the gateway. :func:`choose_engines` picks the engine of each for
a scenario; :class:`Links` holds the two of one gateway, started with it and parked with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamproof.core.capabilities import ScenarioSkipped
from streamproof.core.durations import TimeScale
from streamproof.fakes.model import FakeModel
from streamproof.faults.engines import FaultLink
from streamproof.faults.engines.pool import EnginePool
from streamproof.faults.records import LinkEvent
from streamproof.suites.gateway.scenario import GatewayScenario, ModelPath

if TYPE_CHECKING:
    from streamproof.faults.engines.mitmproxy import MitmproxyLink

__all__ = ["Links", "choose_engines", "proxy_environment"]


async def choose_engines(pool: EnginePool, scenario: GatewayScenario) -> dict[str, str]:
    """The engine of each link (``browser``, ``model``) that can carry out ``scenario``'s plan,
    made ready; the scenario is skipped when the run's engine cannot."""
    named: dict[str, str] = {str(k): str(v) for k, v in scenario.links.engine.items()}
    if scenario.model_engine is not None:
        named["model"] = scenario.model_engine
    chosen, problems = pool.choose(
        {"browser": scenario.links.browser, "model": scenario.links.model}, named.items()
    )
    if problems:
        raise ScenarioSkipped(
            f"the run's engine {pool.default} cannot carry out this scenario's "
            f"plan: {'; '.join(problems)}",
            cause="engine",
        )
    await pool.ready(chosen.values())
    return chosen


class Links:
    """The model link and the browser link of one gateway, each on its engine."""

    def __init__(self, pool: EnginePool, scale: TimeScale) -> None:
        self.pool = pool
        self.scale = scale
        self.by_name: dict[str, FaultLink] = {}
        self._forward: MitmproxyLink | None = None
        """The model link when it is a forward proxy (a corporate-proxy path)."""
        self.engines: dict[str, str] = {}
        """The engine of each link in place (the model link's is fixed while the gateway runs:
        the gateway was started with its address)."""
        self.browser_url = ""
        """Where the browser reaches the gateway: the browser link's address."""

    async def start_model(
        self, engine_name: str, model_path: ModelPath, model: FakeModel, model_url: str
    ) -> dict[str, str]:
        """Start the model link on ``engine_name`` in front of the fake model at ``model_url``;
        what the gateway is given to reach the model through it. On a proxy path the link is a
        forward proxy that intercepts TLS, and the gateway learns of it only through the proxy
        variables (:func:`proxy_environment`)."""
        engine = await self.pool.get(engine_name)
        model_link: FaultLink
        self._forward = None
        if model_path == "direct":
            model_link = engine.link("model", model_url, time_scale=self.scale)
            model_env = {"GOOGLE_GEMINI_BASE_URL": await model_link.start()}
        else:
            from streamproof.faults.engines.mitmproxy import MitmproxyEngine

            if not isinstance(engine, MitmproxyEngine):
                raise TypeError(f"model_path {model_path} needs the mitmproxy engine")
            forward = engine.forward_link(
                "model", time_scale=self.scale, buffer_sse=model_path == "buffering-proxy"
            )
            model_link = self._forward = forward
            proxy_url = await forward.start()
            model_env = {
                **proxy_environment(proxy_url, str(engine.ca_cert)),
                "GOOGLE_GEMINI_BASE_URL": await model.serve_tls(),
            }
        self.by_name["model"] = model_link
        self.engines["model"] = engine_name
        return model_env

    async def start_browser(self, engine_name: str, gateway_url: str) -> None:
        """Put the browser link on ``engine_name`` in front of the gateway (the one in place,
        if any, is closed)."""
        old = self.by_name.pop("browser", None)
        if old is not None:
            await old.close()
        engine = await self.pool.get(engine_name)
        browser_link = engine.link("browser", gateway_url, time_scale=self.scale)
        self.by_name["browser"] = browser_link
        self.engines["browser"] = engine_name
        self.browser_url = await browser_link.start()

    def load(self, scenario: GatewayScenario) -> None:
        """The scenario's fault plan on each link."""
        self.by_name["model"].load(scenario.links.model)
        self.by_name["browser"].load(scenario.links.browser)

    def set_epoch(self, t0: float) -> None:
        for link in self.by_name.values():
            link.set_epoch(t0)

    def proxy_upstream(self) -> tuple[str, ...]:
        """On a proxy path, the local address of each connection the proxy opened to the
        model since the plan was loaded; else none."""
        return self._forward.upstream_addresses if self._forward is not None else ()

    def events(self) -> dict[str, tuple[LinkEvent, ...]]:
        """What each link recorded so far."""
        return {name: tuple(link.events) for name, link in self.by_name.items()}

    async def close(self) -> None:
        for link in self.by_name.values():
            await link.close()


def proxy_environment(proxy_url: str, ca_file: str) -> dict[str, str]:
    """What a gateway behind a corporate proxy is given
    (docs/reference/gateway-contract.md#through-a-corporate-proxy):
    the proxy for both schemes in both spellings, ``NO_PROXY`` emptied (an inherited one must
    not exempt the fake model on loopback) and the proxy's CA as the only trusted one."""
    return {
        "HTTPS_PROXY": proxy_url,
        "HTTP_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "http_proxy": proxy_url,
        "NO_PROXY": "",
        "no_proxy": "",
        "SSL_CERT_FILE": ca_file,
    }
