# Two commands do everything (each installs into .venv on first use):
#   make run    the conformance suite against the bundled references (streamproof run)
#   make test   the harness's own tests, ruff and mypy
.PHONY: run test lint type bench clean

.venv/.installed: pyproject.toml setup.py scripts/bootstrap
	scripts/bootstrap

run: .venv/.installed
	.venv/bin/streamproof run $(ARGS)

test: .venv/.installed lint type
	.venv/bin/python -m pytest $(ARGS)

lint: .venv/.installed
	.venv/bin/ruff check harness
	.venv/bin/ruff format --check harness
	.venv/bin/lint-imports

type: .venv/.installed
	.venv/bin/mypy

clean:
	rm -rf .venv reports/*.json reports/*.xml reports/runs reports/latest
