// The guard's decisions in words, as the Rust apps word them (apps/shared: `words`,
// `TickReport`): shared by the guarded job (app.js) and the `guarded` wrapper (guarded.js).

export const iso = (ms) => new Date(Number(ms)).toISOString().replace(/\.\d+Z$/, 'Z');
export const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v));

// A guard-error as one line (service errors never carry a credential).
export function describe(error) {
  if (error?.tag === 'bad-option') return `bad option (${error.val.field}): ${error.val.message}`;
  if (error?.tag && error.tag !== 'lease') {
    return `${error.tag}: ${typeof error.val === 'string' ? error.val : error.val?.message}`;
  }
  if (error?.tag !== 'lease') return String(error?.message ?? error);
  const cause = error.val;
  if (typeof cause.val === 'string') return `${cause.tag}: ${cause.val}`;
  const code = cause.val.code ? ` ${cause.val.code}` : '';
  return `${cause.tag} (HTTP ${cause.val.status}${code}): ${cause.val.message}`;
}

export function skipDetail(s, reason) {
  const why = reason.val;
  switch (reason.tag) {
    case 'held-by-other':
      if (why.holder === s.holder) {
        // Our own earlier tick still works: naming ourselves "another" holder would mislead.
        return `the previous tick of this replica is still working (lease held by ${s.holder} until it completes or expires)`;
      }
      return `held by ${why.holder ?? 'another instance'}`;
    case 'already-ran': {
      const state = why.running ? 'still running' : (why.outcome ?? 'ended');
      return `already ran for ${iso(why.dueAtMs)} (${why.holder ?? 'another instance'}, ${state}); next due ${iso(why.nextDueMs)}`;
    }
    case 'too-late':
      return `too late: ${why.lateByMs / 1000n} s after the due time; next due ${iso(why.nextDueMs)}`;
    case 'not-due':
      return `not due yet: the first due time is ${iso(why.nextDueMs)}`;
    case 'paused':
      return `paused by ${why.by} since ${iso(why.sinceMs)}${why.reason ? `: ${why.reason}` : ''}`;
    case 'schedule-conflict':
      return `deferring to the newer schedule ${why.newer} (on this lock since ${iso(why.sinceMs)}): this replica's ${why.ours} is being replaced; if no replica with the newer schedule ticks again, this one takes over at ${iso(why.untilMs)}`;
    default:
      return `could not decide: ${describe(why)}`;
  }
}

// The due time a skip is about, when its reason names one (not-due names the next).
export const skipDueMs = (reason) => (reason.tag === 'not-due' ? null : (reason.val?.dueAtMs ?? null));

// The line the Rust apps print for a tick (`TickReport::line`): it names the due time the
// decision is about, never the tick that woke the replica.
export function line(r) {
  if (r.fencing_token === null && r.decision === 'error') return `[${r.holder}] error: ${r.detail}`;
  if (r.fencing_token === null) {
    return `[${r.holder}] ${r.due_at ? `skipped the due time ${r.due_at}` : 'skipped'}: ${r.detail}`;
  }
  const tookOver = r.previous_abandoned ? ' (took over an abandoned run)' : '';
  const caughtUp = r.missed > 0 ? ` (caught up ${r.missed} missed due times)` : '';
  const what = r.manual_by
    ? `ran the manual run asked by ${r.manual_by}`
    : r.due_at ? `ran for the due time ${r.due_at}` : 'ran';
  return `[${r.holder}] ${what} with fencing token ${r.fencing_token}${tookOver}${caughtUp}: ${r.detail}`;
}
