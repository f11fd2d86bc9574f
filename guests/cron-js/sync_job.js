// A plain sync cron job in JavaScript (ComponentizeJS, `fermyon:spin-cron@2.0.0`), written as
// the toolchain's docs show an export, that knows nothing of traffic-cop: the sync cron wrapper
// makes it a guarded singleton. Prints `handler called for <timestamp>` on every call, then
// succeeds and fails in turn by the due time (`timestamp / 3 % 2`), as the other test jobs'
// `alternate` mode: its world imports no environment to read a mode from. A WIT u64 arrives
// as a BigInt; a `result` error leaves as the thrown value.

export function handleCronEvent(metadata) {
  const due = metadata.timestamp;
  console.log(`handler called for ${due}`);
  if (due / 3n % 2n === 1n) {
    throw { tag: 'other', val: `the job failed for ${due}` };
  }
}
