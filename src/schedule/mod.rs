//! Schedules: when a guarded job is due. Civil-calendar arithmetic ([`civil`]) and cron
//! expressions in the trigger's dialect ([`cron`]).

pub mod civil;
pub mod cron;
