// The guarded job in JavaScript (ComponentizeJS): `POST /run` is one tick, as apps/shared's
// `tick` in Rust: ask the guard, do the work if it is our turn, complete with the outcome.
// With the Spin variable `board_token` set, `POST /pause`, `/resume` and `/run-now` are the
// operator's verbs, for callers presenting `Authorization: Bearer <board_token>`.
// The guard is an import, `traffic-cop:lease/guard@0.3.0`, served by the lease component
// (composed in by Spin's component dependency or by `wac plug`); settings are Spin variables.
// WIT u64 values arrive and leave as BigInt; `result` errors arrive as thrown exceptions
// whose `payload` is the WIT error.

import { board, complete, guardedInvoke, keepAlive, pause, resume, runNow } from 'traffic-cop:lease/guard@0.3.0';
import { describe, iso, json, line, skipDetail, skipDueMs } from './decisions.js';
import { bearerMatches, parameters, respond } from './http_io.js';
import { lockOf, optionsOf, setting, settings, unscheduled, whole } from './settings.js';

const OPERATOR_ROUTES = ['/pause', '/resume', '/run-now'];
// A request is no place for a long wait (the Rust apps cap it alike): pause again to wait more.
const MAX_DRAIN_MS = 120000n;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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
        throw new Error(`stopped: lease lost during the work (${describe(lost.payload)})`);
      }
      keepAliveBy = Date.now() + (ticket.options.keepAliveSeconds ?? 5) * 1000;
    }
  }
}

function janitor(s) {
  const rows = board({ connectionString: s.connectionString, container: s.container }).locks;
  const held = rows.filter((r) => r.state === 'leased' || r.state === 'breaking').length;
  return `js job: ${rows.length} locks, ${held} held`;
}

async function tick(s) {
  // `skip` is the reason's WIT case (`paused`, `not-due`, ...) for scripts; `detail` for people.
  const report = { holder: s.holder, decision: 'skip', skip: null, fencing_token: null, previous_abandoned: false };
  Object.assign(report, { manual_by: null, missed: null, late_by_ms: null, detail: '' });
  const decision = guardedInvoke(lockOf(s), optionsOf(s));
  if (decision.tag === 'skip') {
    const due = skipDueMs(decision.val);
    const dueAt = due === null ? null : iso(due);
    return Object.assign(report, { skip: decision.val.tag, detail: skipDetail(s, decision.val), due_at: dueAt });
  }
  const ticket = decision.val;
  Object.assign(report, {
    due_at: unscheduled() ? null : iso(ticket.pastDue.dueAtMs),
    decision: 'run',
    fencing_token: Number(ticket.fencingToken),
    previous_abandoned: ticket.previousAbandoned,
    manual_by: ticket.manualBy ?? null,
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
    detail = `job failed: ${describe(failed.payload ?? failed)}`;
    outcome = { tag: 'failure', val: detail };
  }
  try {
    complete(ticket, outcome);
  } catch (failed) {
    detail += `; complete failed: ${describe(failed.payload ?? failed)}`;
  }
  report.detail = detail;
  return report;
}

const UNGUARDED_RUN =
  'POST /run on a job without a schedule would let anyone run it at will: ' +
  'set a schedule, or board_token to protect the routes';

function operatorLine(answer) {
  let state = 'not paused';
  if (answer.paused) {
    state = `paused by ${answer.paused.by} since ${iso(answer.paused.sinceMs)}${answer.paused.reason ? ` (${answer.paused.reason})` : ''}`;
  }
  if (answer.runNowBy) state += `; a manual run asked by ${answer.runNowBy} waits for the next tick`;
  if (answer.running) state += `; run ${answer.running.fencingToken} of ${answer.running.holder ?? '?'} still in progress`;
  return state;
}

// The operator-answer with its WIT field names, as the Python guest answers it.
function operatorJson(answer) {
  const paused = answer.paused && { by: answer.paused.by, since_ms: answer.paused.sinceMs, reason: answer.paused.reason };
  const running = answer.running && {
    holder: answer.running.holder ?? null,
    since_ms: answer.running.sinceMs,
    fencing_token: answer.running.fencingToken,
  };
  return json({ paused: paused ?? null, run_now_by: answer.runNowBy ?? null, running: running ?? null });
}

function operate(request, route, query, responseOut) {
  const lock = lockOf(settings());
  let found;
  let by;
  let drainMs;
  try {
    found = parameters(request, query);
    by = (found.by ?? '').trim();
    if (!by) throw new Error('by is required: who is asking');
    const asked = whole('drain_ms', found.drain_ms ?? '0');
    drainMs = Number(asked < MAX_DRAIN_MS ? asked : MAX_DRAIN_MS);
  } catch (bad) {
    respond(responseOut, 400, 'application/json', json({ error: bad.message }));
    return;
  }
  let answer;
  try {
    if (route === '/pause') answer = pause(lock, by, found.reason ?? '', drainMs);
    else if (route === '/resume') answer = resume(lock, by);
    else answer = runNow(lock, by);
  } catch (failed) {
    const text = describe(failed.payload ?? failed);
    console.log(`http ${route.slice(1)} by ${by} failed: ${text}`);
    const status = failed.payload?.val?.tag === 'invalid-argument' ? 400 : 502;
    respond(responseOut, status, 'application/json', json({ error: text }));
    return;
  }
  console.log(`http ${route.slice(1)} by ${by}: ${operatorLine(answer)}`);
  respond(responseOut, 200, 'application/json', operatorJson(answer));
}

// A hand-written wasi:http@0.2.0 handler rather than StarlingMonkey's `fetch` event: this
// ComponentizeJS serves the `fetch` event only as `wasi:http/incoming-handler@0.2.10`, so a
// world on the 0.2.0 WIT the Python guest uses needs its own export.
export const incomingHandler = {
  async handle(request, responseOut) {
    const [full, query = ''] = (request.pathWithQuery() ?? '/').split(/\?(.*)/s);
    const path = full.length > 1 && full.endsWith('/') ? full.slice(0, -1) : full;
    const post = request.method().tag === 'post';
    // Without a token the operator's routes do not exist: nobody can pause the job.
    const token = setting('board_token', '').trim();
    try {
      if (post && path === '/run' && token && !bearerMatches(request, token)) {
        const challenge = [['www-authenticate', new TextEncoder().encode('Bearer realm="traffic-cop"')]];
        respond(responseOut, 401, 'text/plain', 'a bearer token is needed', challenge);
      } else if (post && path === '/run' && !token && unscheduled()) {
        respond(responseOut, 403, 'text/plain', UNGUARDED_RUN);
      } else if (post && path === '/run') {
        const report = await tick(settings());
        console.log(`http tick: ${line(report)}`);
        respond(responseOut, 200, 'application/json', JSON.stringify(report));
      } else if (post && token && OPERATOR_ROUTES.includes(path)) {
        if (!bearerMatches(request, token)) {
          const challenge = [['www-authenticate', new TextEncoder().encode('Bearer realm="traffic-cop"')]];
          respond(responseOut, 401, 'text/plain', 'a bearer token is needed', challenge);
        } else {
          operate(request, path, query, responseOut);
        }
      } else {
        const routes = `POST /run${token ? ', POST /pause, /resume, /run-now' : ''}`;
        respond(responseOut, 404, 'text/plain', `routes: ${routes}`);
      }
    } catch (misconfigured) {
      respond(responseOut, 500, 'text/plain', misconfigured.message);
    }
  },
};
