// The JavaScript one-line form's job (tests/spin/http_wrapper.rs): a WASI 0.2 HTTP handler as
// ComponentizeJS exports one, guarded by `guarded(...)` around it and nothing else. It prints
// and answers as the Rust jobs do (harness/cron-handler/behaviour.rs): its call, the run
// `currentRun()` gives it, the body it read; then it waits `HANDLER_MS` and answers by its
// mode, `ok` 200, `fail` 500, `trap` a thrown error (which traps), `cycle` those in turn by the
// wall clock's 3 s slot (ok, fail, trap, ok).

import { getEnvironment } from 'wasi:cli/environment@0.2.0';
import { currentRun, guarded } from 'traffic-cop-guarded';
import { respond } from 'traffic-cop-guarded';

const variable = (name) => Object.fromEntries(getEnvironment())[name];

function mode() {
  const chosen = variable('HANDLER_MODE') ?? '';
  if (chosen === 'cycle') return ['ok', 'fail', 'trap', 'ok'][Math.floor(Date.now() / 3000) % 4];
  return chosen;
}

function readAll(request) {
  const body = request.consume();
  const stream = body.stream();
  const chunks = [];
  try {
    for (;;) chunks.push(stream.blockingRead(65536n));
  } catch (ended) {
    if (ended?.payload?.tag !== 'closed') throw ended;
  } finally {
    stream[Symbol.dispose]();
    body[Symbol.dispose]();
  }
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
  return bytes;
}

async function handle(request, responseOut) {
  const path = request.pathWithQuery() ?? '/';
  const now = mode();
  console.log(`handler called for ${path}: ${now}`);
  const run = currentRun();
  if (run) console.log(`handler given fencing token ${run.fencingToken} for the due time ${run.dueAtMs} (${run.missed} missed)`);
  const body = readAll(request);
  const end = body.indexOf(10);
  const first = new TextDecoder().decode(end < 0 ? body : body.subarray(0, end));
  console.log(`handler read ${body.length} bytes: ${first}`);
  await new Promise((resolve) => setTimeout(resolve, Number(variable('HANDLER_MS') ?? 0)));
  if (now === 'fail') respond(responseOut, 500, 'text/plain', `the job failed for ${path}`);
  else if (now === 'trap') throw new Error(`the job trapped for ${path}`);
  else respond(responseOut, 200, 'text/plain', `the job ran for ${path}`);
}

export const incomingHandler = { handle: guarded(handle) };
