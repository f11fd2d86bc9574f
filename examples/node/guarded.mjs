// traffic-cop's lease component in plain Node.js, no Spin: the same .wasm, transpiled by jco
// (`npm run transpile` writes ./gen). Every call is synchronous: preview2-shim runs each
// outgoing HTTP request to completion before the call returns. The guard is
// traffic-cop:lease/guard@0.3.0: cron schedules in a time zone, and the operator's verbs.
//
//   TRAFFIC_COP_CONNECTION_STRING='UseDevelopmentStorage=true' node guarded.mjs
//
// Optional: TRAFFIC_COP_CONTAINER, TRAFFIC_COP_LOCK, TRAFFIC_COP_HOLDER.
import { lease, 'traffic-cop:lease/guard@0.3.0' as guard } from './gen/traffic-cop.js';

const env = process.env;
const connectionString = env.TRAFFIC_COP_CONNECTION_STRING ?? 'UseDevelopmentStorage=true';
const container = env.TRAFFIC_COP_CONTAINER ?? 'traffic-cop';
const lockName = env.TRAFFIC_COP_LOCK ?? 'node-example';
const holder = env.TRAFFIC_COP_HOLDER ?? `node-${process.pid}`;

// An exported result<T, E> returns T and throws E as a ComponentError's payload.
function attempt(call) {
  try {
    return { ok: call() };
  } catch (error) {
    if (error?.payload === undefined) throw error;
    return { err: error.payload };
  }
}

// Due at second 0 of every minute, UTC (Spin's dialect: seconds first). A lock that has
// never run owes the minute that has just begun, so the first call runs.
const everyMinute = { tag: 'cron', val: { expression: '0 * * * * *', timeZone: undefined, dialect: undefined } };

const options = (who) => ({
  holder: who,
  leaseSeconds: 15,
  keepAliveSeconds: undefined, // option<T>: undefined is none
  schedule: everyMinute,
  earlyToleranceMs: undefined,
  startingDeadlineSeconds: undefined,
  overlap: undefined,
  waitMs: undefined,
});

const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v));

function skipReason(skip) {
  switch (skip.tag) {
    case 'held-by-other':
      return `held-by-other (${skip.val.holder ?? 'unknown'})`;
    case 'already-ran':
      return `already-ran (${skip.val.holder ?? 'unknown'}, ${skip.val.outcome ?? 'running'})`;
    case 'too-late':
      return `too-late by ${skip.val.lateByMs} ms`;
    case 'not-due':
      return `not-due until ${new Date(Number(skip.val.nextDueMs)).toISOString()}`;
    case 'paused':
      return `paused (${skip.val.by}: ${skip.val.reason})`;
    case 'schedule-conflict':
      return `schedule-conflict (${skip.val.recorded} kept, ours ${skip.val.ours})`;
    default:
      return `error ${json(skip.val)}`;
  }
}

function run(decision, what) {
  if (decision.tag !== 'run') throw new Error(`${what}: expected a run, got ${skipReason(decision.val)}`);
  return decision.val;
}

const skipLine = (decision) =>
  `${decision.tag}, ${decision.tag === 'skip' ? skipReason(decision.val) : 'run (unexpected)'}`;

// 1. The raw lease verbs on a lock blob of their own.
const raw = { connectionString, container, blob: `${lockName}-raw` };
const grant = attempt(() => lease.acquire(raw, { tag: 'fixed', val: 15 }, undefined));
if (grant.err) throw new Error(`acquire failed: ${JSON.stringify(grant.err)}`);
console.log(`acquire: leased ${raw.blob} with lease id ${grant.ok.leaseId}`);
console.log(`inspect: ${lease.inspect(raw).state}`);
const rival = attempt(() => lease.acquire(raw, { tag: 'fixed', val: 15 }, undefined));
console.log(`second acquire: ${rival.err ? rival.err.tag : 'granted (unexpected)'}`);
lease.release(raw, grant.ok.leaseId);
console.log(`release: ${lease.inspect(raw).state}`);

// 2. A schedule checked before deploying it: 02:00 in Berlin across the spring-forward night
// (2026-03-29), when 02:00 does not exist and the run moves to the gap's end (03:00 CEST).
const berlin = { tag: 'cron', val: { expression: '0 0 2 * * *', timeZone: 'Europe/Berlin', dialect: undefined } };
const due = guard.dueTimes(berlin, BigInt(Date.UTC(2026, 2, 28)), 3);
// list<u64> comes as a BigUint64Array.
console.log(`due-times: ${Array.from(due, (ms) => new Date(Number(ms)).toISOString()).join(' ')}`);

// 3. The guard: is it my turn for this due time?
const lock = { connectionString, container, blob: lockName };
const decision = guard.guardedInvoke(lock, options(holder));
if (decision.tag !== 'run') {
  console.log(`guarded-invoke: skip, ${skipReason(decision.val)}`);
  process.exit(0);
}
const ticket = decision.val;
console.log(
  `guarded-invoke: run, fencing token ${ticket.fencingToken}, missed ${ticket.pastDue.missed}`,
);
console.log(`rival guarded-invoke: ${skipLine(guard.guardedInvoke(lock, options(`${holder}-rival`)))}`);

// The singleton work goes here; its result is written fenced by the run's token.
const written = attempt(() =>
  guard.writeFenced(ticket, `${lockName}-result`, new TextEncoder().encode(`ran by ${holder}\n`)),
);
console.log(`write-fenced: ${written.ok ? `token ${written.ok.fencingToken}` : json(written.err)}`);

guard.complete(ticket, { tag: 'success' });
console.log('complete: ok');
console.log(`after complete: ${skipLine(guard.guardedInvoke(lock, options(`${holder}-late`)))}`);

// 4. The operator's verbs: pause (drain-ms 0: do not wait for a run), run-now, resume.
const paused = guard.pause(lock, 'ops', 'deploy', 0);
console.log(`pause: by ${paused.paused?.by}, reason ${paused.paused?.reason}`);
console.log(`while paused: ${skipLine(guard.guardedInvoke(lock, options(holder)))}`);
const asked = guard.runNow(lock, 'ops');
console.log(`run-now: asked by ${asked.runNowBy}, still paused ${asked.paused !== undefined}`);
console.log(`run-now while paused: ${skipLine(guard.guardedInvoke(lock, options(holder)))}`);
const resumed = guard.resume(lock, 'ops');
console.log(`resume: paused ${resumed.paused !== undefined}`);
const manual = run(guard.guardedInvoke(lock, options(holder)), 'after resume');
console.log(`after resume: run, fencing token ${manual.fencingToken}, manual by ${manual.manualBy}`);
guard.complete(manual, { tag: 'success' });

const board = guard.board({ connectionString, container });
console.log(`board: tz database ${board.tzdata}`);
for (const entry of board.locks) {
  console.log(
    `board: ${entry.name} ${entry.state} token ${entry.fencingToken} outcome ${entry.lastOutcome ?? '-'} runs ${entry.history.length}`,
  );
}
