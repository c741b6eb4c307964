"""The reference gateway's settings (config.py): read from the environment, the ``--bug`` override,
and each unusable value refused as a ConfigError."""

from __future__ import annotations

import pytest

from streamproof.suites.gateway.reference.config import ConfigError, Settings, parse_tokens

# In the slow tier with the end-to-end tests of the reference it was split from
# (test_server_process.py).
pytestmark = pytest.mark.slow


def test_settings_from_env() -> None:
    base = {
        "PORT": "0",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1",
        "GOOGLE_API_KEY": "k",
        "STREAMPROOF_TOOL_URL": "http://127.0.0.1:2",
    }
    settings = Settings.from_env(base)
    assert settings.users_by_token == {"alice-token": "alice", "bob-token": "bob"}
    assert (settings.max_llm_calls, settings.run_timeout, settings.bug) == (20, 120.0, None)
    assert Settings.from_env({**base, "STREAMPROOF_BUG": "no-auth"}).bug == "no-auth"
    assert Settings.from_env({**base, "STREAMPROOF_BUG": "no-auth"}, bug="no-llm-budget").bug == (
        "no-llm-budget"
    )
    for bad in ({"PORT": "x"}, {"STREAMPROOF_RUN_TIMEOUT": "0"}, {"STREAMPROOF_BUG": "nope"}):
        with pytest.raises(ConfigError):
            Settings.from_env({**base, **bad})
    with pytest.raises(ConfigError, match="STREAMPROOF_TOOL_URL"):
        Settings.from_env({k: v for k, v in base.items() if k != "STREAMPROOF_TOOL_URL"})
    assert parse_tokens("a=1, b=2") == {"1": "a", "2": "b"}
    for bad_tokens in ("a", "a=", "=1", "a=1,b=1", ""):
        with pytest.raises(ConfigError):
            parse_tokens(bad_tokens)
