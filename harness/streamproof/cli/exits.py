"""The command's exit statuses (what each means: :mod:`streamproof.cli`)."""

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_TARGET = 0, 1, 2, 3
