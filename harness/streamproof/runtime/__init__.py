"""What a running harness process needs whichever way it was started (the command or pytest):
the background event loop, signals, parallel runs and shards, the bundled suites, the exit."""
