# Two commands do everything (each installs into .venv on first use):
#   make run    the conformance suite against the bundled references (streamproof run)
#   make test   the harness's own tests, ruff and mypy
#   make check  the inner loop: every test not marked slow, ruff and mypy (at most 2 minutes)
#   make bench  the benchmarks (harness/streamproof/bench/), each printing its table (a few minutes)
#   make docs   the documentation site (docs/, mkdocs.yml), built with --strict into site/
.PHONY: run test check test-profile lint type bench clean tools java bytecode docs

.venv/.installed: pyproject.toml setup.py scripts/bootstrap scripts/build-toxiproxy scripts/install-chromium scripts/install-node-oracles
	scripts/bootstrap

# toxiproxy-server for the toxiproxy engine: rebuilt only when missing or not the pinned version
# (a machine without Go gets a message and the engine stays unavailable); Debian's chromium for
# the report's browser test, installed only when missing (silent when there); the Node oracles'
# packages (@ag-ui/client, ai) from their lockfile, installed when missing or older than it.
tools:
	@scripts/build-toxiproxy
	@scripts/install-chromium
	@scripts/install-node-oracles

# The Java references built before the tests start (scripts/build-java-references), not by
# the first Java test beside timing-bound scenarios; nothing is built while they are up to date.
java: .venv/.installed
	@scripts/build-java-references

# The harness's own bytecode, written once: an editable install compiles nothing, and where
# PYTHONDONTWRITEBYTECODE is set (.ci/run sets it) every process the tests and the suite start
# (streamproof runs, workers, reference gateways) compiled harness/ again from source, about
# 0.3 s of CPU per `streamproof run` (docs/explanation/performance.md#the-test-loop). Python checks each file's
# modification time, so a file changed since is compiled again in memory, never read stale.
bytecode: .venv/.installed
	@.venv/bin/python -m compileall -q -j 0 harness > /dev/null

run: .venv/.installed tools bytecode
	.venv/bin/streamproof run $(ARGS)

# The tests run in parallel (pytest-xdist): TEST_WORKERS processes, three on a 2-core CI
# machine: most of a slow test's time is waiting on the scripted time of the runs it started,
# which a third worker fills (552 s of pytest against 769 s on two, in one tree). The first slow
# test of a module starts, and a test's pooled runs past its first start, only while the cores
# were busy less than 85 % of the last two seconds (harness/tests/cores.py), so the third worker
# does not overload the machine where scenario timings are judged
# (docs/explanation/performance.md#a-third-worker). The `slow` ones
# (whole suites, Java, a browser) are handed out first and in order (harness/tests/conftest.py),
# and tests sharing one expensive fixture stay on one worker (xdist_group, --dist loadgroup).
# ARGS='-m "not slow"' leaves the slow ones out for a quick inner loop; TEST_WORKERS=0 runs
# everything in this one process. The 25 slowest tests are listed at the end: where the time goes.
TEST_WORKERS ?= 3
test: .venv/.installed tools java bytecode lint type
	.venv/bin/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=25 $(ARGS)

# The inner loop (docs/explanation/mutants.md#the-harnesss-own-tests): every test not marked `slow` on CHECK_WORKERS
# processes, after ruff and mypy; no whole suites, Java, ADK's api_server or browser. Every
# product module has a test here (harness/tests/project/test_check_tier.py names any that has none).
# make test stays the whole suite, what CI runs.
# Three workers on two cores: half of the fast tier's time is waiting (fault timings, a
# client's read timeout), which a third worker fills: 2515 tests in 101 s against 121 s on two
# and 120 s on four, where each worker's imports cost more than the waiting it fills.
CHECK_WORKERS ?= 3
check: .venv/.installed tools bytecode lint type
	.venv/bin/python -m pytest -n $(CHECK_WORKERS) --dist loadgroup -m "not slow" --durations=15 $(ARGS)

# Where make test's time goes: per module and fixture, setup/call/teardown, CPU/waiting
# (harness/streamproof/bench/test_time.py). ARGS as for make test.
test-profile: .venv/.installed tools java bytecode
	.venv/bin/python -m streamproof.bench.test_time --workers $(TEST_WORKERS) $(ARGS)

# Bounded, loopback only; the figures are in docs/explanation/performance.md.
bench: .venv/.installed bytecode
	.venv/bin/python -m streamproof.bench.proxy_throughput
	.venv/bin/python -m streamproof.bench.a2a_fanout
	.venv/bin/python -m streamproof.bench.reset_overhead
	.venv/bin/python -m streamproof.bench.parallel

# The documentation site, built as CI builds it (harness/tests/project/test_docs.py): --strict turns every
# warning (a broken link, a page missing from the nav, an unknown anchor) into a failure.
# DOCS_DIR sets where the site goes (site/, ignored by git).
DOCS_DIR ?= site
docs: .venv/.installed
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir $(DOCS_DIR)

lint: .venv/.installed
	.venv/bin/ruff check harness
	.venv/bin/ruff format --check harness
	.venv/bin/lint-imports

type: .venv/.installed
	.venv/bin/mypy

clean:
	rm -rf .venv site reports/*.json reports/*.xml reports/runs reports/latest
