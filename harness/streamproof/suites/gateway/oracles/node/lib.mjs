// What every oracle script shares: reading the captured stream from stdin, keeping stdout for the
// one JSON document it prints, and the installed version of the library it runs.
import { readFileSync } from "node:fs";

/** The whole of stdin as bytes (the Python wrapper closes it after writing the capture). */
export async function readStdin() {
  const parts = [];
  for await (const part of process.stdin) parts.push(part);
  return new Uint8Array(Buffer.concat(parts));
}

/** The version of a package installed beside this script (from its package.json). */
export function installedVersion(name) {
  const meta = new URL(`./node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(meta, "utf8")).version;
}

/**
 * Route the console to stderr: libraries log there (warnings, "Agent execution failed"), and
 * stdout carries only the result document.
 */
export function quietConsole() {
  const toStderr = (...args) => process.stderr.write(`${args.map(String).join(" ")}\n`);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.error = toStderr;
  console.warn = toStderr;
}

/** Print the result document and end the process (no handle may keep it alive). */
export function emit(doc) {
  process.stdout.write(`${JSON.stringify(doc)}\n`, () => process.exit(0));
}

/** Let every pending microtask and I/O callback of the step just taken run before the next. */
export function settle() {
  return new Promise((resolve) => setImmediate(resolve));
}
