#!/usr/bin/env bash
# Build the Java reference A2A client: target/streamproof-java-client.jar (runnable, its
# dependencies in target/lib). Maven offline first, so a warm machine needs no network; online
# only when the offline build fails (the first resolve, or an artifact missing locally).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v mvn >/dev/null 2>&1; then
    echo "build.sh: mvn not found on PATH (Maven 3 and JDK 17 build the Java reference client)" >&2
    exit 127
fi
if mvn -o -q -B package 2>/tmp/streamproof-java-client-offline.$$.log; then
    rm -f /tmp/streamproof-java-client-offline.$$.log
    exit 0
fi
echo "build.sh: the offline build failed (first resolve?); building online:" >&2
tail -n 5 /tmp/streamproof-java-client-offline.$$.log >&2 || true
rm -f /tmp/streamproof-java-client-offline.$$.log
exec mvn -q -B package
