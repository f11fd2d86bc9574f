// The guarded job in JavaScript (ComponentizeJS): `POST /run` is one tick, as apps/shared's
// `tick` in Rust: ask the guard, do the work if it is our turn, complete with the outcome.
// The guard is an import, `traffic-cop:lease/guard@0.2.0`, served by the lease component
// (composed in by Spin's component dependency or by `wac plug`); settings are Spin variables.
// WIT u64 values arrive and leave as BigInt; `result` errors arrive as thrown exceptions
// whose `payload` is the WIT error.

import { board, complete, guardedInvoke, keepAlive } from 'traffic-cop:lease/guard@0.2.0';
import { get } from 'fermyon:spin/variables@2.0.0';
import { Fields, OutgoingBody, OutgoingResponse, ResponseOutparam } from 'wasi:http/types@0.2.0';

function setting(name, fallback) {
  try {
    return get(name);
  } catch (e) {
    if (fallback === undefined) throw new Error(`variable ${name} is not set`);
    return fallback;
  }
}

function number(name, fallback) {
  const text = setting(name, fallback).trim();
  if (!/^\d+$/.test(text)) throw new Error(`variable ${name} must be a whole number, got ${JSON.stringify(text)}`);
  return BigInt(text);
}

function settings() {
  // Spin makes an instance per request, so an empty holder could only be a per-request
  // label: the same fallback as the Rust apps, random per instance.
  let holder = setting('holder', '').trim();
  if (!holder) {
    const bytes = crypto.getRandomValues(new Uint8Array(3));
    holder = `instance-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
  }
  return {
    connectionString: setting('connection_string'),
    container: setting('container'),
    blob: setting('lock'),
    holder,
    leaseSeconds: Number(number('lease_seconds')),
    intervalSeconds: number('interval_seconds'),
    workMs: Number(number('work_ms', '0')),
  };
}

const describe = (error) => JSON.stringify(error?.payload ?? String(error), (_, v) => (typeof v === 'bigint' ? Number(v) : v));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function skipDetail(s, reason) {
  switch (reason.tag) {
    case 'held-by-other':
      if (reason.val.holder === s.holder) {
        // Our own earlier tick still works: naming ourselves "another" holder would mislead.
        return `the previous tick of this replica is still working (lease held by ${s.holder} until it completes or expires)`;
      }
      return `held by ${reason.val.holder ?? 'another instance'}`;
    case 'already-ran':
      return `already ran this interval (${reason.val.holder ?? 'another instance'})`;
    case 'too-late':
      return `too late: ${reason.val.lateByMs / 1000n} s after the due time`;
    default:
      return `could not decide: ${describe({ payload: reason.val })}`;
  }
}

// Waits through `workMs` in small steps, renewing when due; stops once the lease is lost
// (another run may already have started).
async function work(s, ticket) {
  if (Date.now() >= Number(ticket.deadlineMs)) throw new Error("stopped before starting: the lease's deadline had passed");
  const until = Date.now() + s.workMs;
  let keepAliveBy = Number(ticket.keepAliveByMs);
  while (Date.now() < until) {
    await sleep(100);
    if (Date.now() >= until) break;
    if (Date.now() >= keepAliveBy) {
      try {
        keepAlive(ticket);
      } catch (lost) {
        throw new Error(`stopped: lease lost during the work (${describe(lost)})`);
      }
      keepAliveBy = Date.now() + (ticket.options.keepAliveSeconds ?? 5) * 1000;
    }
  }
}

function janitor(s) {
  const rows = board({ connectionString: s.connectionString, container: s.container });
  const held = rows.filter((r) => r.state === 'leased' || r.state === 'breaking').length;
  return `js job: ${rows.length} locks, ${held} held`;
}

async function tick(s) {
  const report = { holder: s.holder, decision: 'skip', fencing_token: null, previous_abandoned: false, missed: null, late_by_ms: null, detail: '' };
  const lock = { connectionString: s.connectionString, container: s.container, blob: s.blob };
  const options = {
    holder: s.holder,
    leaseSeconds: s.leaseSeconds,
    intervalSeconds: s.intervalSeconds,
    offsetSeconds: 0n,
    startingDeadlineSeconds: undefined,
    keepAliveSeconds: undefined,
  };
  const decision = guardedInvoke(lock, options);
  if (decision.tag === 'skip') {
    report.detail = skipDetail(s, decision.val);
    return report;
  }
  const ticket = decision.val;
  Object.assign(report, {
    decision: 'run',
    fencing_token: Number(ticket.fencingToken),
    previous_abandoned: ticket.previousAbandoned,
    missed: Number(ticket.pastDue.missed),
    late_by_ms: Number(ticket.pastDue.lateByMs),
  });
  try {
    await work(s, ticket);
  } catch (stopped) {
    report.detail = stopped.message;
    return report;
  }
  let detail;
  let outcome;
  try {
    detail = janitor(s);
    outcome = { tag: 'success' };
  } catch (failed) {
    detail = `job failed: ${describe(failed)}`;
    outcome = { tag: 'failure', val: detail };
  }
  try {
    complete(ticket, outcome);
  } catch (failed) {
    detail += `; complete failed: ${describe(failed)}`;
  }
  report.detail = detail;
  return report;
}

// The line the Rust apps print for a tick (`TickReport::line`).
function line(r) {
  if (r.fencing_token === null) return `[${r.holder}] skipped: ${r.detail}`;
  const tookOver = r.previous_abandoned ? ' (took over an abandoned run)' : '';
  const caughtUp = r.missed > 0 ? ` (caught up ${r.missed} missed due times)` : '';
  return `[${r.holder}] ran with fencing token ${r.fencing_token}${tookOver}${caughtUp}: ${r.detail}`;
}

function respond(responseOut, status, contentType, text) {
  const bytes = new TextEncoder().encode(text);
  const enc = (v) => new TextEncoder().encode(v);
  const headers = Fields.fromList([
    ['content-type', enc(contentType)],
    ['content-length', enc(String(bytes.length))],
  ]);
  const response = new OutgoingResponse(headers);
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

// A hand-written wasi:http@0.2.0 handler rather than StarlingMonkey's `fetch` event: this
// ComponentizeJS serves the `fetch` event only as `wasi:http/incoming-handler@0.2.10`, so a
// world on the 0.2.0 WIT the Python guest uses needs its own export.
export const incomingHandler = {
  async handle(request, responseOut) {
    const path = (request.pathWithQuery() ?? '/').split('?')[0].replace(/\/+$/, '');
    if (request.method().tag !== 'post' || !path.endsWith('/run')) {
      respond(responseOut, 404, 'text/plain', 'routes: POST /run');
      return;
    }
    let s;
    try {
      s = settings();
    } catch (bad) {
      respond(responseOut, 500, 'text/plain', bad.message);
      return;
    }
    const report = await tick(s);
    console.log(`http tick: ${line(report)}`);
    respond(responseOut, 200, 'application/json', JSON.stringify(report));
  },
};
