// `guarded(handle)`: the one-line form for a JavaScript (ComponentizeJS) WASI 0.2 HTTP handler,
// where no wrapper component can serve (Spin 3, SpinKube's shims: docs/wrappers.md):
//   export const incomingHandler = { handle: guarded(handle) };
// The world imports `traffic-cop:lease/guard@1.0.0` and Spin's variables (guests/wit, world
// `http-guarded`), and spin.toml gives the lease component and the settings.
//
// Every request is a tick, answered as the Rust attribute answers it (apps/guarded): a skip 200
// with the decision as JSON, a run the handler's own response (a status of 400 or more is the
// run's failure), settings the guard cannot use 500. Every line it prints is the guard's own.
// Nothing renews the lease while the handler runs, so it must end within its lease
// (`max_job_seconds` says how long it may take). An incoming request's headers cannot be
// changed, so the handler asks `currentRun()` for its fencing token instead of reading headers.

import { get } from 'fermyon:spin/variables@2.0.0';
import { guardedInvoke } from 'traffic-cop:lease/guard@1.0.0';
import { ResponseOutparam } from 'wasi:http/types@0.2.0';
import { respond } from './http_io.js';

// The guard's settings: these Spin variables as they are (the guard reads and judges them).
const VARIABLES = ['connection_string', 'container', 'lock', 'holder', 'lease_seconds',
  'keep_alive_seconds', 'schedule', 'time_zone', 'cron_dialect', 'early_tolerance_ms',
  'starting_deadline_seconds', 'replace_after_seconds', 'wait_ms', 'max_job_seconds'];
const camel = (name) => name.replace(/_(.)/g, (_, c) => c.toUpperCase());
const variable = (name) => { try { return get(name); } catch { return undefined; } };
// u64 values are BigInts, which JSON.stringify refuses.
const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v));
let run = null;

// The run the handler is called for: its fencingToken, dueAtMs and missed (BigInts).
export const currentRun = () => (run ? { ...run } : null);

export function guarded(handle) {
  return async function guardedHandle(request, responseOut) {
    const report = { lock: variable('lock'), holder: variable('holder') || null, decision: 'skip' };
    Object.assign(report, { reason: null, variable: null, fencing_token: null, due_at_ms: null });
    Object.assign(report, { late_by_ms: null, missed: null, manual_by: null, previous_abandoned: false });
    const settings = Object.fromEntries(VARIABLES.map((n) => [camel(n), variable(n)]));
    const decision = guardedInvoke(settings);
    let status = null;
    if (decision.tag === 'skip') {
      const reason = decision.val.reason;
      status = 200;
      Object.assign(report, { reason: reason.tag, due_at_ms: reason.val?.dueAtMs ?? null });
      if (reason.tag === 'error' && reason.val.tag === 'bad-setting') {
        Object.assign(report, { decision: 'error', reason: 'misconfigured', variable: reason.val.val.variable });
        status = 500;
      }
      report.detail = decision.val.text;
    } else {
      Object.assign(report, await ran(decision.val, () => called(handle, request, responseOut)));
    }
    console.log(json(report));
    console.error(`http ${request.pathWithQuery() ?? '/'}: ${report.detail}`);
    if (status !== null) respond(responseOut, status, 'application/json', json(report));
  };
}

// The handler called under `granted`, its answer the run's outcome: the report's run fields.
async function ran(granted, call) {
  const details = granted.details();
  const due = details.pastDue;
  run = { fencingToken: details.fencingToken, dueAtMs: due.dueAtMs, missed: due.missed };
  let answered;
  try {
    answered = await call();
  } finally {
    run = null;
  }
  const [status, error] = answered;
  const said = status === null ? error : `the handler answered ${status}`;
  const failed = status === null || status >= 400;
  const finished = granted.complete({ tag: failed ? 'failure' : 'success', val: said });
  return { decision: 'run', holder: details.holder, fencing_token: details.fencingToken,
    due_at_ms: due.dueAtMs, late_by_ms: due.lateByMs, missed: due.missed,
    manual_by: details.manualBy ?? null, previous_abandoned: details.previousAbandoned,
    detail: finished.text };
}

// Calls the handler: the status it answered, or null and why, read from its
// `ResponseOutparam.set`; the response it sets is passed on unchanged.
async function called(handle, request, responseOut) {
  const answers = [];
  const set = ResponseOutparam.set;
  ResponseOutparam.set = (out, response) => {
    if (response.tag === 'ok') answers.push([response.val.statusCode(), null]);
    else answers.push([null, `it answered the error ${JSON.stringify(response.val)}`]);
    return set.call(ResponseOutparam, out, response);
  };
  try {
    await handle(request, responseOut);
  } finally {
    ResponseOutparam.set = set;
  }
  return answers[0] ?? [null, 'it set no response'];
}
