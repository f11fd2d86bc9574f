//! The native tests: the library over fakes (a scripted transport, the in-memory fake
//! service, a virtual clock), with no process started and no wasmtime. Fast and deterministic;
//! each module says what it covers.

#[path = "../support/ecosystem.rs"]
mod ecosystem;
mod fenced_support;
#[path = "../support/scenarios.rs"]
mod scenarios;
#[path = "../support/mod.rs"]
mod support;

mod advice;
mod budgets;
mod claim_scale;
mod client;
mod cron_croner;
mod cron_dst;
mod decision_log;
mod demo_deps;
mod docs;
mod edges;
mod entra;
mod fenced;
mod fenced_races;
mod fuzz;
mod guard;
mod guest_freshness;
mod hold;
mod interleave;
mod layout;
mod listing;
mod memory;
mod operator;
mod records;
mod refusals;
mod registries;
mod release;
mod retries;
mod schedule;
mod schedule_change;
mod schedule_deploy;
mod secrets;
mod settings_check;
mod signing_vectors;
mod skew;
mod sweep;
mod test_groups;
mod unheard;
mod waiting;
mod workflow;
