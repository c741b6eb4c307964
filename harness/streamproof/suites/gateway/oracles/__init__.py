"""Real consumer libraries run over a captured gateway stream, as oracles for our own checks.

Each module runs one library and returns its findings as plain data (frozen models), so a test
can set them beside the verdicts of the ``ag-ui`` and ``ai-sdk-ui`` profiles' checks:

* :func:`~streamproof.suites.gateway.oracles.ag_ui_validate.validate_ag_ui`: the community validator
  ``ag-ui-validate`` (PyPI, in process), its rule catalogue ``AGUI0xx``, ``AGUI1xx``, ...;
* :func:`~streamproof.suites.gateway.oracles.ag_ui_client.run_ag_ui_client`: the official client
  ``@ag-ui/client`` (npm, in Node): its event schema, verify middleware and reducer;
* :func:`~streamproof.suites.gateway.oracles.ai_sdk.read_ai_sdk_stream`: the AI SDK's ``ai``
  package (npm, in Node): its UI message chunk schema and ``readUIMessageStream``.

Each takes the stream as the list of its events' data, in order (what the observation's frames
hold): a finding's ``index`` is the event's position in that list, the same index a frame has.
They do I/O (a subprocess for the Node ones), so they live beside the checks, not in them. The
Node ones need ``scripts/install-node-oracles`` (``npm ci`` in ``oracles/node``; ``make tools``
runs it); see README.md in this folder.
"""
