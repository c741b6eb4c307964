"""GW-AUTH and GW-HISTORY-ISOLATION, from the harness's probe requests."""

from __future__ import annotations

import pytest

from harness.tests.suites.gateway.observations import (
    assert_fails,
    assert_not_applicable,
    assert_passes,
    assert_skips,
    with_auth,
    worked_example,
)
from streamproof.core.verdicts import Outcome
from streamproof.suites.gateway.checks.auth import auth_verdicts, history_isolation_verdicts


def test_not_requested_is_not_applicable() -> None:
    obs = worked_example(auth_probes=None)
    assert_not_applicable(auth_verdicts(obs), "GW-AUTH", "the scenario sends no auth probes")
    assert_not_applicable(
        history_isolation_verdicts(obs), "GW-HISTORY-ISOLATION", "sends no auth probes"
    )


def test_undeclared_users_skip() -> None:
    obs = worked_example(auth_probes=(), auth_declared=False)
    assert_skips(auth_verdicts(obs), "GW-AUTH", "the target declares no users/tokens")
    assert_skips(
        history_isolation_verdicts(obs), "GW-HISTORY-ISOLATION", "declares no users/tokens"
    )


def test_a_gateway_that_refuses_passes() -> None:
    assert_passes(auth_verdicts(with_auth()), "GW-AUTH")
    assert_passes(history_isolation_verdicts(with_auth()), "GW-HISTORY-ISOLATION")


@pytest.mark.parametrize("status", [401, 403, 404])
def test_isolation_accepts_any_refusal(status: int) -> None:
    assert_passes(
        history_isolation_verdicts(with_auth(history_other_user=status)), "GW-HISTORY-ISOLATION"
    )


def test_a_chat_without_token_that_is_served_is_non_strict() -> None:
    verdict = assert_fails(
        auth_verdicts(with_auth(chat_no_token=200, history_wrong_token=403)),
        "GW-AUTH",
        "probe chat-no-token: POST http://127.0.0.1:8080/chat/s1 got HTTP 200, expected 401",
        "probe history-wrong-token: GET http://127.0.0.1:8080/history/s1 got HTTP 403",
        outcome=Outcome.NON_STRICT,
    )
    assert "chat-no-token: 200" in str(verdict.observed)


def test_a_probe_with_no_answer_is_reported() -> None:
    assert_fails(
        auth_verdicts(with_auth(chat_wrong_token=None)),
        "GW-AUTH",
        "got no answer",
        outcome=Outcome.NON_STRICT,
    )


def test_another_users_history_served_is_non_strict() -> None:
    assert_fails(
        history_isolation_verdicts(with_auth(history_other_user=200)),
        "GW-HISTORY-ISOLATION",
        "probe history-other-user: GET http://127.0.0.1:8080/history/s1 got HTTP 200, expected 401 "
        "or 403 or 404",
        outcome=Outcome.NON_STRICT,
    )


def test_probes_that_were_not_run_skip() -> None:
    obs = with_auth()
    assert obs.auth_probes is not None
    only_chat = obs.model_copy(update={"auth_probes": obs.auth_probes[:2]})
    assert_passes(auth_verdicts(only_chat), "GW-AUTH")
    assert_skips(
        history_isolation_verdicts(only_chat), "GW-HISTORY-ISOLATION", "history-other-user"
    )


def test_a_404_for_another_user_proves_nothing_when_the_owner_could_not_read_it_either() -> None:
    obs = with_auth().model_copy(update={"history": None, "history_error": "HTTP 500"})
    assert_fails(
        history_isolation_verdicts(obs),
        "GW-HISTORY-ISOLATION",
        "probe history-other-user: GET http://127.0.0.1:8080/history/s1 got HTTP 404, but the "
        "owner's own read of that history failed too",
        outcome=Outcome.NON_STRICT,
    )


@pytest.mark.parametrize("status", [401, 403])
def test_an_explicit_refusal_counts_even_when_the_owner_could_not_read(status: int) -> None:
    obs = with_auth(history_other_user=status).model_copy(
        update={"history": None, "history_error": "HTTP 500"}
    )
    assert_passes(history_isolation_verdicts(obs), "GW-HISTORY-ISOLATION")
