// traffic-cop's lease component in plain Node.js, no Spin: the same .wasm, transpiled by jco
// (`npm run transpile` writes ./gen). Every call is synchronous: preview2-shim runs each
// outgoing HTTP request to completion before the call returns.
//
//   TRAFFIC_COP_CONNECTION_STRING='UseDevelopmentStorage=true' node guarded.mjs
//
// Optional: TRAFFIC_COP_CONTAINER, TRAFFIC_COP_LOCK, TRAFFIC_COP_HOLDER.
import { lease, 'traffic-cop:lease/guard@0.2.0' as guard } from './gen/traffic-cop.js';

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

const options = (who) => ({
  holder: who,
  leaseSeconds: 15,
  intervalSeconds: 60n, // u64 is a BigInt
  offsetSeconds: 0n,
  startingDeadlineSeconds: undefined, // option<T>: undefined is none
  keepAliveSeconds: undefined,
});

function skipReason(skip) {
  switch (skip.tag) {
    case 'held-by-other':
      return `held-by-other (${skip.val.holder ?? 'unknown'})`;
    case 'already-ran':
      return `already-ran (${skip.val.holder ?? 'unknown'}, ${skip.val.outcome ?? 'running'})`;
    case 'too-late':
      return `too-late by ${skip.val.lateByMs} ms`;
    default:
      return `error ${JSON.stringify(skip.val, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`;
  }
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

// 2. The guard: is it my turn this interval?
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
const other = guard.guardedInvoke(lock, options(`${holder}-rival`));
console.log(`rival guarded-invoke: ${other.tag}, ${other.tag === 'skip' ? skipReason(other.val) : 'run (unexpected)'}`);

// The singleton work goes here; its result is written fenced by the run's token.
const written = attempt(() =>
  guard.writeFenced(ticket, `${lockName}-result`, new TextEncoder().encode(`ran by ${holder}\n`)),
);
console.log(`write-fenced: ${written.ok ? `token ${written.ok.fencingToken}` : JSON.stringify(written.err)}`);

guard.complete(ticket, { tag: 'success' });
console.log('complete: ok');
const again = guard.guardedInvoke(lock, options(`${holder}-late`));
console.log(`after complete: ${again.tag}, ${again.tag === 'skip' ? skipReason(again.val) : 'run (unexpected)'}`);
for (const entry of guard.board({ connectionString, container })) {
  console.log(
    `board: ${entry.name} ${entry.state} token ${entry.fencingToken} outcome ${entry.lastOutcome ?? '-'}`,
  );
}
