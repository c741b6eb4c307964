#!/usr/bin/env bash
# Builds target/streamproof-java-gateway.jar (a runnable Spring Boot jar) and extracts it into
# target/app/ (the application's jar beside lib/, its dependencies unpacked from the nested
# jars), which is what the target file starts: a start then costs about 4 CPU-s instead of 10,
# since the JVM reads 229 plain jars instead of Spring Boot's loader reading them out of one
# (docs/explanation/java-references.md#start-cost).
# Maven offline first: after the first resolve everything is in the local repository and the
# build needs no network. Only when the offline build fails (a missing artifact on a fresh
# machine, or a changed pom) does it fall back to an online build, which resolves and caches.
set -euo pipefail
cd "$(dirname "$0")"
command -v mvn >/dev/null || { echo "build.sh: mvn not found on PATH" >&2; exit 127; }
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
extract() {
  rm -rf target/app
  java -Djarmode=tools -jar target/streamproof-java-gateway.jar extract --destination target/app
}
if mvn -o -q -B package >"$err" 2>&1; then
  extract
  exit 0
fi
echo "build.sh: offline build failed; resolving online. Offline said:" >&2
grep -E 'ERROR' "$err" | head -n 5 >&2 || true
mvn -q -B package
extract
