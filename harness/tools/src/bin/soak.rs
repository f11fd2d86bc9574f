//! The soak run (a command, not a test): 8 contenders over 10 locks against Azurite through
//! the fault-injecting proxy, 30% of requests faulted (stalls past the timeouts included),
//! random crashes, at least 10,000 guarded decisions. Prints what happened and the checker's
//! verdict; exits non-zero on any violation. Bounded: it stops after its ticks.
//!
//! `scripts/soak [decisions] [seed]`

use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::faults::{Fault, FaultPlan};
use traffic_cop_wasm_host::soak::{check, run, SoakConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let decisions: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let (contenders, locks) = (8, 10);
    let ticks = decisions.div_ceil((contenders * locks) as u64);
    // Stalls cost 10 s each, so they are one draw in 36; the other kinds share the rest.
    let mut faults = FaultPlan::quick(seed, 300);
    faults.faults = faults.faults.repeat(5);
    faults.faults.push(Fault::Stall);
    let azurite = Azurite::start();
    println!(
        "soak: {contenders} contenders x {locks} locks x {ticks} one-second ticks, 30% faults, 1% crashes, seed {seed}\n"
    );
    let config = SoakConfig {
        contenders,
        locks,
        ticks,
        crash_per_mille: 10,
        overrun_per_mille: 5,
        first_overruns: 0,
        faults,
        azurite_port: azurite.port,
        container: "soak".into(),
    };
    let report = run(&config);
    let violations = check(&report.grants);
    report.print(&violations);
    azurite.stop();
    if !violations.is_empty() {
        std::process::exit(1);
    }
}
