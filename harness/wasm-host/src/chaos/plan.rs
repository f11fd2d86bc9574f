//! What the chaos run does to its replicas, and when: a seeded schedule for the long run, or
//! a fixed script for the short test. Every disruption ends by itself (a restart, a SIGCONT,
//! a reconnect), so the run always comes back to all replicas up.

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// SIGKILL the whole group mid-whatever; start it again after `down`.
    Kill { down: Duration },
    /// SIGTERM (or, `interrupt`, SIGINT: Ctrl-C) to `spin up` alone, a graceful stop as an
    /// orchestrator asks for one; start it again after `down`.
    Terminate { interrupt: bool, down: Duration },
    /// SIGSTOP the group for this long, then SIGCONT.
    Pause(Duration),
    /// Blackhole every request of this replica for this long.
    Partition(Duration),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Replica(usize),
    /// Whoever the board shows in the first half of a run (waits up to 10 s for one, else
    /// skipped).
    Runner,
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// From the start of the run.
    pub at: Duration,
    pub target: Target,
    pub action: Action,
}

/// A seeded schedule over `length`: an event every 5-12 s, each one of the four kinds, aimed at
/// the running replica more often than not (that is where mutual exclusion is at stake).
/// Pauses run 3-25 s, so some outlast the 15 s lease and some do not.
pub fn seeded(seed: u64, replicas: usize, length: Duration) -> Vec<Event> {
    let mut rng = Rng(seed ^ 0x0005_eedc_4a05);
    let mut events = Vec::new();
    let mut at = Duration::from_secs(8);
    while at < length.saturating_sub(Duration::from_secs(20)) {
        let target = if rng.below(100) < 60 {
            Target::Runner
        } else {
            Target::Replica(rng.below(replicas as u64) as usize)
        };
        let secs = |rng: &mut Rng, from: u64, to: u64| {
            Duration::from_secs(from + rng.below(to - from + 1))
        };
        let action = match rng.below(100) {
            0..=24 => Action::Kill { down: secs(&mut rng, 1, 8) },
            25..=34 => {
                Action::Terminate { interrupt: rng.below(2) == 0, down: secs(&mut rng, 1, 5) }
            }
            35..=69 => Action::Pause(secs(&mut rng, 3, 25)),
            _ => Action::Partition(secs(&mut rng, 4, 25)),
        };
        events.push(Event { at, target, action });
        at += secs(&mut rng, 5, 12);
    }
    events
}

/// splitmix64: the same schedule for the same seed, on any machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
