"""A broken A2A client: it prints ``{"status":"error"}`` and exits without any request.

``python -m harness.tests.independent.error_only_client``.
"""

from __future__ import annotations

import json

if __name__ == "__main__":
    print(json.dumps({"status": "error"}), flush=True)
