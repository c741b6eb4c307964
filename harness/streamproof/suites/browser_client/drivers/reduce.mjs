// Runs a reducer module over a scenario's frames, for the browser-client suite's `module:`
// targets (docs/reference/browser-client-contract.md, "A reducer module"). Node >= 20, no
// dependencies.
//
//   node reduce.mjs MODULE_PATH < {"frames": [{"type", "data", "id"}, ...], "bug": null | "name"}
//
// stdout, one JSON line per state: {"frame": null, "state": <initial>}, then
// {"frame": i, "state": <state after frame i>} for each frame (0-based). When the module cannot
// be imported, has no reduce function, throws, or returns a state JSON cannot write, the last
// line is {"error": "..."} (naming the module and the frame) and the exit status is 2; the
// states before it have been written. A bad command line or input also exits 2 with an error
// line.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const DEFAULT_STATE = { messages: [], draft: null };

function write(line) {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function fail(message) {
  write({ error: message });
  process.exitCode = 2;
}

function reason(err) {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

// The state as one JSON line, or a reason it cannot be one.
function encode(state) {
  let text;
  try {
    text = JSON.stringify(state);
  } catch (err) {
    return { problem: `a state JSON cannot write (${reason(err)})` };
  }
  if (text === undefined) return { problem: `a state JSON cannot write (${typeof state})` };
  return { text };
}

async function main() {
  const modulePath = process.argv[2];
  if (!modulePath) {
    fail("usage: node reduce.mjs MODULE_PATH < input.json");
    return;
  }
  let input;
  try {
    input = JSON.parse(readFileSync(0, "utf8"));
  } catch (err) {
    fail(`the input on stdin is not JSON: ${reason(err)}`);
    return;
  }
  const frames = input && Array.isArray(input.frames) ? input.frames : null;
  if (frames === null) {
    fail('the input on stdin has no "frames" list');
    return;
  }
  if (input.bug !== undefined && input.bug !== null) globalThis.STREAMPROOF_BUG = input.bug;

  let mod;
  try {
    mod = await import(pathToFileURL(resolve(modulePath)).href);
  } catch (err) {
    fail(`${modulePath}: could not be imported: ${reason(err)}`);
    return;
  }
  if (typeof mod.reduce !== "function") {
    fail(`${modulePath}: exports no reduce function`);
    return;
  }

  let state = mod.initialState === undefined ? DEFAULT_STATE : mod.initialState;
  let line = encode(state);
  if (line.problem) {
    fail(`${modulePath}: initialState is ${line.problem}`);
    return;
  }
  process.stdout.write(`{"frame":null,"state":${line.text}}\n`);

  for (const [i, frame] of frames.entries()) {
    try {
      state = mod.reduce(state, frame);
    } catch (err) {
      fail(`${modulePath}: reduce threw at frame ${i} (${frame?.type}): ${reason(err)}`);
      return;
    }
    line = encode(state);
    if (line.problem) {
      fail(`${modulePath}: reduce returned ${line.problem} at frame ${i} (${frame?.type})`);
      return;
    }
    process.stdout.write(`{"frame":${i},"state":${line.text}}\n`);
  }
}

await main();
