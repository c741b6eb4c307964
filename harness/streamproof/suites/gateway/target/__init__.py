"""The gateway under test: its target file (:mod:`.config`), the gateway started from it and
waited for until ready (:mod:`.running`), the gateways a run keeps per settings (:mod:`.gateways`)
and how long the harness waits on the gateway's runs (:mod:`.waits`).
"""
