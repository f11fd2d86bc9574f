//! The calls the sweep fails, what each answered, and what its setup left.

use std::time::SystemTime;
use traffic_cop::guard::{
    BoardEntry, Claim, Decision, FencedData, FencedError, FencedWrite, OperatorAnswer, Ticket,
};
use traffic_cop::ops::{LeaseGrant, LockStatus};
use traffic_cop::{Error, LeaseId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Another run holds the lease.
    Follower,
    /// This due time already ran.
    AlreadyRan,
    /// Due and free.
    Leader,
    /// Nothing exists yet: container and lock are created.
    FirstUse,
    /// The previous run was abandoned (its lease ran out).
    Takeover,
    /// Bearer authorization: the token request, then the leader's path.
    TokenLeader,
    /// Three items: one ran this due time, one is due, one was never used.
    Claim,
    Board,
    KeepAlive,
    Complete,
    WriteFenced,
    ReadFenced,
    Acquire,
    Renew,
    Change,
    Release,
    Break,
    Inspect,
    /// A cron schedule in a time zone: due and free.
    CronLeader,
    /// A run-now asked for a due time that already ran: a manual grant.
    ManualLeader,
    /// Overlap `replace`: a run holding past its limit into the next due time is broken.
    Replace,
    /// Waiting for a held lock whose lease runs out within the wait.
    WaitLeader,
    /// An operator's pause while a run holds the lease.
    Pause,
    Resume,
    RunNow,
    /// `complete` after an operator's pause was written during the run.
    CompletePaused,
}

pub const CALLS: [Call; 26] = [
    Call::Follower,
    Call::AlreadyRan,
    Call::Leader,
    Call::FirstUse,
    Call::Takeover,
    Call::TokenLeader,
    Call::Claim,
    Call::Board,
    Call::KeepAlive,
    Call::Complete,
    Call::WriteFenced,
    Call::ReadFenced,
    Call::Acquire,
    Call::Renew,
    Call::Change,
    Call::Release,
    Call::Break,
    Call::Inspect,
    Call::CronLeader,
    Call::ManualLeader,
    Call::Replace,
    Call::WaitLeader,
    Call::Pause,
    Call::Resume,
    Call::RunNow,
    Call::CompletePaused,
];

/// What a call answered.
// One value per case, judged and dropped: boxing the decision would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Done {
    Decision(Decision),
    Tickets(Result<Claim, Error>),
    Board(Result<Vec<BoardEntry>, Error>),
    KeptAlive(Result<SystemTime, Error>),
    Completed(Result<(), Error>),
    Wrote(Result<FencedWrite, FencedError>),
    Read(Result<Option<FencedData>, Error>),
    Granted(Result<LeaseGrant, Error>),
    Released(Result<(), Error>),
    Broke(Result<u32, Error>),
    Looked(Result<LockStatus, Error>),
    Operated(Result<OperatorAnswer, Error>),
}

/// What the setup left, for the call and the judge.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// A run granted in the setup (the one to keep alive, complete or write with).
    pub ticket: Option<Ticket>,
    /// A lease someone else holds on the lock when the call starts.
    pub held_by_other: Option<String>,
    /// The lease id the raw verbs use.
    pub lease_id: Option<LeaseId>,
    /// Locks the call works on (blob names).
    pub locks: Vec<String>,
    /// The stuck run a `replace` call is to break.
    pub replaced: Option<Ticket>,
}
