// `guarded(handle)`, the one-line form for a JavaScript (ComponentizeJS) WASI 0.2 HTTP handler,
// for hosts where no wrapper component can serve (Spin 3, SpinKube's shims):
//   export const incomingHandler = { handle: guarded(handle) };
// The app is built against the WIT this package carries (wit/, world `http-guarded`), which
// imports `traffic-cop:lease/guard@1.0.0` and Spin's variables; spin.toml gives the lease
// component and the settings.
//
// Every request is a tick, answered as the Rust attribute answers it: a skip 200 with the
// decision as JSON, a run the handler's own response (a status of 400 or more is the run's
// failure), settings the guard cannot use 500. Every line it prints is the guard's own.
// Nothing renews the lease while the handler runs, so it must end within its lease
// (`max_job_seconds` says how long it may take). An incoming request's headers cannot be
// changed, so the handler asks `currentRun()` for its fencing token instead of reading headers.

import { get } from 'fermyon:spin/variables@2.0.0';
import { guardedInvoke } from 'traffic-cop:lease/guard@1.0.0';
import { Fields, OutgoingBody, OutgoingResponse, ResponseOutparam } from 'wasi:http/types@0.2.0';

// The guard's settings: these Spin variables as they are (the guard reads and judges them).
const VARIABLES = ['connection_string', 'container', 'lock', 'holder', 'lease_seconds',
  'keep_alive_seconds', 'schedule', 'time_zone', 'cron_dialect', 'early_tolerance_ms',
  'starting_deadline_seconds', 'replace_after_seconds', 'wait_ms', 'max_job_seconds',
  'refresh_seconds'];
const camel = (name) => name.replace(/_(.)/g, (_, c) => c.toUpperCase());
const variable = (name) => { try { return get(name); } catch { return undefined; } };
let run = null;

// The run the handler is called for: its fencingToken, dueAtMs and missed (BigInts).
export const currentRun = () => (run ? { ...run } : null);

export function guarded(handle) {
  return async function guardedHandle(request, responseOut) {
    const decision = guardedInvoke(Object.fromEntries(VARIABLES.map((n) => [camel(n), variable(n)])));
    const said = decision.tag === 'skip' ? decision.val : await ran(decision.val, handle, request, responseOut);
    console.log(said.report);
    console.error(`http ${request.pathWithQuery() ?? '/'}: ${said.text}`);
    if (decision.tag === 'skip') {
      const bad = said.reason.tag === 'error' && said.reason.val.tag === 'bad-setting';
      respond(responseOut, bad ? 500 : 200, 'application/json', said.report);
    }
  };
}

// The handler called under `granted`; the answer it sets through `ResponseOutparam.set` (passed
// on unchanged) is the run's outcome: a status of 400 or more, or none, a failure.
async function ran(granted, handle, request, responseOut) {
  const details = granted.details();
  const due = details.pastDue;
  run = { fencingToken: details.fencingToken, dueAtMs: due.dueAtMs, missed: due.missed };
  const answers = [];
  const set = ResponseOutparam.set;
  ResponseOutparam.set = (out, response) => {
    if (response.tag === 'ok') answers.push(response.val.statusCode());
    else answers.push(`it answered the error ${JSON.stringify(response.val)}`);
    return set.call(ResponseOutparam, out, response);
  };
  try {
    await handle(request, responseOut);
  } finally {
    ResponseOutparam.set = set;
    run = null;
  }
  const said = answers[0] ?? 'it set no response';
  const failed = typeof said !== 'number' || said >= 400;
  const text = typeof said === 'number' ? `the handler answered ${said}` : said;
  return granted.complete({ tag: failed ? 'failure' : 'success', val: text });
}

// Answers with `text` (the decision for a skip; the test job's own answers too).
export function respond(responseOut, status, contentType, text) {
  const enc = (v) => new TextEncoder().encode(v);
  const bytes = enc(text);
  const headers = [['content-type', enc(contentType)], ['content-length', enc(String(bytes.length))]];
  const response = new OutgoingResponse(Fields.fromList(headers));
  response.setStatusCode(status);
  const body = response.body();
  ResponseOutparam.set(responseOut, { tag: 'ok', val: response });
  const stream = body.write();
  // blocking-write-and-flush takes at most 4096 bytes per call.
  for (let at = 0; at < bytes.length; at += 4096) stream.blockingWriteAndFlush(bytes.subarray(at, at + 4096));
  // The stream must be dropped before its body can be finished.
  stream[Symbol.dispose]();
  OutgoingBody.finish(body, undefined);
}
