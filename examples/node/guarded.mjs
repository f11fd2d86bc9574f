// traffic-cop's lease component in plain Node.js, no Spin: the same .wasm, transpiled by jco
// (`npm run transpile` writes ./gen). Every call is synchronous: preview2-shim runs each
// outgoing HTTP request to completion before the call returns. The contract is
// traffic-cop:lease@1.0.0: the raw lease verbs, and the guard (cron schedules in a time zone,
// one run per due time with a fencing token, the operator's verbs, the board).
//
//   TRAFFIC_COP_CONNECTION_STRING='UseDevelopmentStorage=true' node guarded.mjs
//
// Optional: TRAFFIC_COP_CONTAINER, TRAFFIC_COP_LOCK, TRAFFIC_COP_HOLDER.
import {
  'traffic-cop:lease/lease@1.0.0' as lease,
  'traffic-cop:lease/guard@1.0.0' as guard,
} from './gen/traffic-cop.js';

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

// The guard's settings are the Spin variables' strings (unset: undefined); the guard parses
// and judges them. Due at second 0 of every minute, UTC (Spin's dialect: seconds first): a lock
// that has never run owes the minute that has just begun, so the first call runs.
const settings = (who) => ({
  connectionString, container, lock: lockName, holder: who, leaseSeconds: '15',
  schedule: '0 * * * * *',
});

const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v));

// A skip's reason, and its line for the log in the component's words.
const skipLine = (decision) =>
  decision.tag === 'skip' ? `skip, ${decision.val.reason.tag}: ${decision.val.text}` : 'run (unexpected)';

function granted(decision, what) {
  if (decision.tag !== 'run') throw new Error(`${what}: expected a run, got ${skipLine(decision)}`);
  return decision.val;
}

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
const berlin = { ...settings(holder), schedule: '0 0 2 * * *', timeZone: 'Europe/Berlin' };
const due = guard.dueTimes(berlin, BigInt(Date.UTC(2026, 2, 28)), 3);
// list<u64> comes as a BigUint64Array.
console.log(`due-times: ${Array.from(due, (ms) => new Date(Number(ms)).toISOString()).join(' ')}`);

// 3. The guard: is it my turn for this due time? A granted run is a resource of this instance.
const decision = guard.guardedInvoke(settings(holder));
if (decision.tag !== 'run') {
  console.log(`guarded-invoke: ${skipLine(decision)}`);
  process.exit(0);
}
const run = decision.val;
const details = run.details();
console.log(
  `guarded-invoke: run, fencing token ${details.fencingToken}, missed ${details.pastDue.missed}: ${run.text()}`,
);
console.log(`rival guarded-invoke: ${skipLine(guard.guardedInvoke(settings(`${holder}-rival`)))}`);

// The singleton work goes here; its result is written fenced by the run's token.
const written = attempt(() =>
  run.writeFenced(`${lockName}-result`, new TextEncoder().encode(`ran by ${holder}\n`)),
);
console.log(`write-fenced: ${written.ok ? `token ${written.ok.fencingToken}` : json(written.err)}`);

const finished = run.complete({ tag: 'success', val: 'the example work is done' });
console.log(`complete: ${finished.error ? `failed ${json(finished.error)}` : 'ok'}: ${finished.text}`);
console.log(`after complete: ${skipLine(guard.guardedInvoke(settings(`${holder}-late`)))}`);

// 4. The operator's verbs: pause (drain-ms 0: do not wait for a run), run-now, resume.
const paused = guard.pause(settings(holder), 'ops', 'deploy', 0);
console.log(`pause: by ${paused.paused?.by}, reason ${paused.paused?.reason}`);
console.log(`while paused: ${skipLine(guard.guardedInvoke(settings(holder)))}`);
const asked = guard.runNow(settings(holder), 'ops');
console.log(`run-now: asked by ${asked.runNowBy}, still paused ${asked.paused !== undefined}`);
console.log(`run-now while paused: ${skipLine(guard.guardedInvoke(settings(holder)))}`);
const resumed = guard.resume(settings(holder), 'ops');
console.log(`resume: paused ${resumed.paused !== undefined}`);
const manual = granted(guard.guardedInvoke(settings(holder)), 'after resume');
const manualDetails = manual.details();
console.log(
  `after resume: run, fencing token ${manualDetails.fencingToken}, manual by ${manualDetails.manualBy}`,
);
manual.complete({ tag: 'success', val: 'the manual run is done' });

const board = guard.board(settings(holder));
console.log(`board: tz database ${board.tzdata}`);
for (const entry of board.locks) {
  console.log(
    `board: ${entry.name} ${entry.state} token ${entry.fencingToken} outcome ${entry.lastOutcome ?? '-'} runs ${entry.history.length}`,
  );
}
