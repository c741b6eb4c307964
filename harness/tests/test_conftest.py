"""The harness's own test set-up (harness/tests/conftest.py)."""

from __future__ import annotations

import gc


def test_the_collected_session_is_frozen_out_of_the_collections() -> None:
    """pytest_collection_finish: a full collection does not walk the imported modules and the
    collected tests."""
    assert gc.get_freeze_count() > 10_000
