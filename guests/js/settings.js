// The job's settings, from Spin variables (see spin.toml): the lock, the holder, the schedule.

import { get } from 'fermyon:spin/variables@2.0.0';

const U32_MAX = 2n ** 32n - 1n;

// The variable's value, or undefined when the manifest does not define it.
export function variable(name) {
  try {
    return get(name);
  } catch {
    return undefined;
  }
}

export function setting(name, fallback) {
  const value = variable(name) ?? fallback;
  if (value === undefined) throw new Error(`variable ${name} is not set`);
  return value;
}

export function whole(name, text, limit = 2n ** 64n - 1n) {
  const trimmed = String(text).trim();
  if (!/^\d+$/.test(trimmed) || BigInt(trimmed) > limit) {
    throw new Error(`${name} must be a whole number up to ${limit}, got ${JSON.stringify(trimmed)}`);
  }
  return BigInt(trimmed);
}

export function schedule() {
  const expression = variable('schedule');
  if (expression === undefined) {
    // Manifests written for guard@0.2.0 set `interval_seconds` instead (0: no schedule).
    const interval = variable('interval_seconds');
    if (interval === undefined) throw new Error('variable schedule is not set (a cron expression; empty: none)');
    const seconds = whole('variable interval_seconds', interval);
    return seconds ? { tag: 'every', val: { intervalSeconds: seconds, offsetSeconds: 0n } } : { tag: 'none' };
  }
  if (!expression.trim()) return { tag: 'none' };
  const timeZone = setting('time_zone', '').trim() || undefined;
  return { tag: 'cron', val: { expression: expression.trim(), timeZone, dialect: 'spin' } };
}

export function settings() {
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
    leaseSeconds: Number(whole('variable lease_seconds', setting('lease_seconds'), U32_MAX)),
    schedule: schedule(),
    workMs: Number(whole('variable work_ms', setting('work_ms', '0'))),
  };
}

// No schedule: any tick may run, so an open /run would run the job at anyone's will.
export function unscheduled() {
  const expression = variable('schedule');
  if (expression === undefined || expression === null) {
    const interval = variable('interval_seconds');
    return interval === undefined || interval === null || ['', '0'].includes(interval.trim());
  }
  return expression.trim() === '';
}

export const lockOf = (s) => ({ connectionString: s.connectionString, container: s.container, blob: s.blob });

export const optionsOf = (s) => ({
  holder: s.holder,
  leaseSeconds: s.leaseSeconds,
  schedule: s.schedule,
  // The guard's defaults: keep-alive a third of the lease, 5 s early tolerance, no starting
  // deadline, overlap forbidden, no waiting for a held lock.
  keepAliveSeconds: undefined,
  earlyToleranceMs: undefined,
  startingDeadlineSeconds: undefined,
  overlap: undefined,
  waitMs: undefined,
});
