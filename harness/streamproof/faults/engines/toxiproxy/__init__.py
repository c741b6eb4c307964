"""The toxiproxy engine: each link is a real toxiproxy proxy, with streamproof's recorder behind
it (:mod:`.link` says how every plan item is carried out; :mod:`.cuts` how a cut stays on one
connection; :mod:`.recorder` the recorder; :mod:`.server` the server and its API; :mod:`.toxics`
the toxics a plan sets; :mod:`.engine` the engine that runs one server per session)."""

from streamproof.faults.engines.toxiproxy.engine import ToxiproxyEngine
from streamproof.faults.engines.toxiproxy.link import ToxiproxyLink
from streamproof.faults.engines.toxiproxy.server import ToxiproxyError

__all__ = ["ToxiproxyEngine", "ToxiproxyError", "ToxiproxyLink"]
