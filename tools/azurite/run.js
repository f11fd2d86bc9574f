// Runs Azurite's blob service on loopback, in memory, for as long as whoever started us keeps
// our stdin open: when that process exits (even by a crash) the pipe closes and we stop
// Azurite. This is what lets tests start an emulator without leaking it.
//
// Usage: node run.js [port] [--background]
//   port          default 0: any free port; the "listens on" line names it
//   --background  keep running when stdin closes (`node run.js 10000 --background &`, a
//                 service manager); stop it with SIGTERM or SIGINT (`kill %1`, Ctrl-C)
"use strict";
const argv = process.argv.slice(2);
const background = argv.includes("--background");
const positional = argv.filter((a) => !a.startsWith("--"));
if (argv.some((a) => a.startsWith("--") && a !== "--background")) {
  console.error(`run.js: unknown option ${argv.find((a) => a.startsWith("--") && a !== "--background")}; usage: node run.js [port] [--background]`);
  process.exit(2);
}
const { spawn } = require("child_process");
const path = require("path");

const main = path.join(__dirname, "node_modules", "azurite", "dist", "src", "blob", "main.js");
const args = [
  main,
  "--blobHost", "127.0.0.1",
  "--blobPort", positional[0] || "0",
  "--inMemoryPersistence",
  "--disableTelemetry",
  "--silent",
  "--extentMemoryLimit", "256",
  // Deliberately no --skipApiVersionCheck: our x-ms-version must be one Azurite knows.
];
// Extra flags, one per line (harness/testbed/src/azurite_oauth.rs: --oauth basic --cert … --key …).
if (process.env.AZURITE_EXTRA_ARGS) args.push(...process.env.AZURITE_EXTRA_ARGS.split("\n").filter(Boolean));
if (process.env.AZURITE_DEBUG_LOG) args.push("--debug", process.env.AZURITE_DEBUG_LOG);

const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
child.stdout.on("data", (chunk) => process.stdout.write(chunk));
// Whoever reads our stdout may be gone already; that must not kill us before we stop Azurite.
process.stdout.on("error", () => {});

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  child.kill("SIGTERM");
  setTimeout(() => { child.kill("SIGKILL"); process.exit(0); }, 3000).unref();
}
// A pipe is a supervisor's (the tests' harness): its closing is the stop signal and needs no
// words. Anything else closing at once (`</dev/null &`) is a person who wanted a background run.
const stdinIsPipe = (() => { try { return require("fs").fstatSync(0).isFIFO(); } catch { return false; } })();
function stdinClosed() {
  if (!stopping && !stdinIsPipe) {
    console.error(
      "run.js: stdin closed, so Azurite stops (it lives as long as whoever started it keeps stdin " +
      "open). To keep it running in the background: node run.js PORT --background");
  }
  stop();
}
if (!background) {
  process.stdin.on("end", stdinClosed);
  process.stdin.on("close", stdinClosed);
  process.stdin.on("error", stdinClosed);
  process.stdin.resume();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
child.on("exit", (code) => process.exit(code === null ? 0 : code));
process.on("exit", () => { if (child.exitCode === null) child.kill("SIGKILL"); });
