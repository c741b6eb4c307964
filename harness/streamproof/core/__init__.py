"""The core: verdicts, requirements, durations, patterns, texts, timelines, what a suite
provides. Pure: it names no suite and does no I/O (the import contracts in pyproject.toml)."""
