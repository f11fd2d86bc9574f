// `guarded(handle)`: the one-line form for a JavaScript (ComponentizeJS) WASI 0.2 HTTP handler,
// where no wrapper component can serve (Spin 3, SpinKube's shims: docs/wrappers.md):
//   export const incomingHandler = { handle: guarded(handle) };
// The world imports `traffic-cop:lease/guard@0.3.0` and Spin's variables (guests/wit, world
// `http-guest`), and spin.toml gives the lease component and the settings.
//
// Every request is a tick, answered as the Rust attribute answers it (apps/guarded): a skip 200
// with the decision as JSON, a run the handler's own response (a status of 400 or more is the
// run's failure), a grant that came after its lease's deadline 503, settings that cannot be
// used 500. Nothing renews the lease while the handler runs, so it must end within its lease
// (`max_job_seconds`, as behind the sync wrapper). An incoming request's headers cannot be
// changed, so the handler asks `currentRun()` for its fencing token instead of reading headers.

import { complete, guardedInvoke, showTime } from 'traffic-cop:lease/guard@0.3.0';
import { ResponseOutparam } from 'wasi:http/types@0.2.0';
import { describe, iso, json, line, skipDetail, skipDueMs } from './decisions.js';
import { respond } from './http_io.js';
import { lockOf, optionsOf, setting, settings, whole } from './settings.js';

let run = null;

// The run the handler is called for: its fencingToken, dueAtMs and missed (BigInts).
export const currentRun = () => (run ? { ...run } : null);

export function guarded(handle) {
  return async function guardedHandle(request, responseOut) {
    const prefix = `http ${request.pathWithQuery() ?? '/'}: `;
    let s;
    let maxJob;
    try {
      s = settings();
      const stated = setting('max_job_seconds', '').trim();
      maxJob = stated ? Number(whole('variable max_job_seconds', stated)) : null;
    } catch (bad) {
      console.error(`${prefix}error: ${bad.message}`);
      respond(responseOut, 500, 'text/plain; charset=utf-8', bad.message);
      return;
    }
    const [report, status] = await tick(s, maxJob, () => called(handle, request, responseOut));
    console.log(json(report));
    console.error(`${prefix}${line(report)}`);
    if (status !== null) respond(responseOut, status, 'application/json', json(report));
  };
}

// The decision's report, and the status to answer with (null: the handler answered).
async function tick(s, maxJob, call) {
  const report = { lock: s.blob, holder: s.holder, decision: 'skip', reason: null, variable: null };
  Object.assign(report, { fencing_token: null, due_at_ms: null, due_at: null, late_by_ms: null });
  Object.assign(report, { missed: null, manual_by: null, previous_abandoned: false, detail: '' });
  if (maxJob !== null && maxJob > s.leaseSeconds) {
    Object.assign(report, { decision: 'error', reason: 'misconfigured', variable: 'max_job_seconds' });
    report.detail =
      `set the \`max_job_seconds\` variable: ${maxJob} s is longer than the lease (${s.leaseSeconds} s), ` +
      'and nothing renews the lease while a sync handler runs: raise `lease_seconds` (at most 60)';
    return [report, 500];
  }
  const decision = guardedInvoke(lockOf(s), optionsOf(s));
  if (decision.tag === 'skip') {
    Object.assign(report, { reason: decision.val.tag, detail: skipDetail(s, decision.val) });
    const due = skipDueMs(decision.val);
    Object.assign(report, { due_at_ms: due, due_at: due === null ? null : shown(due) });
    return [report, 200];
  }
  const ticket = decision.val;
  const due = ticket.pastDue;
  Object.assign(report, { decision: 'run', fencing_token: ticket.fencingToken, due_at_ms: due.dueAtMs });
  Object.assign(report, { due_at: shown(due.dueAtMs), late_by_ms: due.lateByMs, missed: due.missed });
  Object.assign(report, { manual_by: ticket.manualBy ?? null, previous_abandoned: ticket.previousAbandoned });
  if (Date.now() >= Number(ticket.deadlineMs)) {
    report.detail = "stopped before starting: the lease's deadline had passed";
    return [report, 503];
  }
  run = { fencingToken: ticket.fencingToken, dueAtMs: due.dueAtMs, missed: due.missed };
  let answered;
  try {
    answered = await call();
  } finally {
    run = null;
  }
  const [status, error] = answered;
  let detail = status === null ? `the handler failed: ${error}` : `the handler answered ${status}`;
  const failed = status === null || status >= 400;
  const outcome = failed ? { tag: 'failure', val: detail } : { tag: 'success' };
  const over = Date.now() - Number(ticket.deadlineMs);
  if (over > 0) {
    detail += `; it outlived its lease by ${(over / 1000).toFixed(1)} s: another run may have started meanwhile`;
  }
  try {
    complete(ticket, outcome);
  } catch (lost) {
    detail += `; complete failed: ${describe(lost.payload ?? lost)}`;
  }
  report.detail = detail;
  return [report, null];
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

function shown(atMs) {
  try {
    return showTime(atMs, setting('time_zone', '').trim() || undefined).local;
  } catch {
    return iso(atMs);
  }
}
