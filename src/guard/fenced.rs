//! Fenced writes: the singleton work's result, written to a blob with the run's fencing token
//! kept beside it (metadata `tc_fencing_token`), so that a run that lost its lease while paused
//! cannot overwrite what a newer run wrote.
//!
//! `write_fenced` first reads the lock's record: a ticket whose token a newer grant has passed
//! is stale at once (even before that run wrote anything), and one whose token was never
//! granted is refused (a forged or corrupted ticket must not lock every later run out). Then
//! it is a compare-and-swap on the data blob's ETag: HEAD it (its token and ETag), refuse if
//! the kept token is newer than the ticket's, else Put Blob with `If-Match` on that ETag
//! (`If-None-Match: *` when absent). A write that lands between the two fails the condition;
//! the driver then looks again and decides again. The lease need not be held: a stale holder
//! is exactly who this protects against, and the token comparisons are what do.

use super::keep_alive::lease_ends;
use super::{RunRecord, Ticket};
use crate::client::LeaseClient;
use crate::config::{Account, Lock};
use crate::error::{Contention, Error};
use crate::ops::{GetBlob, Inspect, PutBlob, PutOutcome, WriteCondition};
use crate::transport::{Runtime, Transport};
use std::fmt;

/// Where the writer's fencing token is kept on a data blob. An identifier: Azurite accepts no
/// other metadata names. Not `tc_fence`, which marks a lock blob's run record.
pub const FENCING_TOKEN_METADATA: &str = "tc_fencing_token";

/// The largest write. The whole body travels in one request within one call's time limits
/// (and within the lease's time left), is copied across the component boundary, and must be
/// readable back whole by `read_fenced`, whose answer the wasi:http transport buffers up to
/// 8 MiB; 4 MiB leaves that room to spare. Larger results belong in a blob the work writes
/// itself, with a fenced write of its name.
pub const MAX_FENCED_BYTES: usize = 4 * 1024 * 1024;

/// How many times a write looks and tries again after losing the compare-and-swap to another
/// writer. Each loss means someone else wrote; a few in a row mean the blob is contended by
/// more than the few runs a fencing token orders, and the caller should hear of it.
const MAX_ROUNDS: u32 = 4;

/// What a fenced write stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FencedWrite {
    pub name: String,
    /// The token now kept with the data: the ticket's.
    pub fencing_token: u64,
    pub etag: Option<String>,
}

/// Data written by a fenced write, with the token of the run that wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FencedData {
    pub contents: Vec<u8>,
    /// 0 when the blob was not written by a fenced write.
    pub fencing_token: u64,
    pub etag: Option<String>,
}

/// Why a fenced write wrote nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FencedError {
    /// A newer run was granted on the lock (its token is `stored`) or wrote the data: this run
    /// is stale and must stop.
    Stale { presented: u64, stored: u64 },
    /// The write could not be made.
    Failed(Error),
}

impl From<Error> for FencedError {
    fn from(error: Error) -> FencedError {
        FencedError::Failed(error)
    }
}

impl fmt::Display for FencedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FencedError::Stale { presented, stored } => write!(
                f,
                "stale fencing token: a newer run (token {stored}) than this one (token \
                 {presented}) was granted on the lock or wrote the data; nothing was written"
            ),
            FencedError::Failed(error) => write!(f, "fenced write failed: {error}"),
        }
    }
}

impl std::error::Error for FencedError {}

/// Writes `contents` to blob `name` in the ticket's container with the ticket's fencing token,
/// unless a newer run was granted on the lock or wrote there (`Stale`). A look at the lock, one
/// at the data blob and one Put Blob in the steady state. Gives up when the time left on the
/// ticket's lease runs out.
pub fn write_fenced<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    name: &str,
    contents: &[u8],
) -> Result<FencedWrite, FencedError> {
    let target = data_blob(&ticket.lock.account, &ticket.lock.container, name)?;
    if name == ticket.lock.blob {
        return Err(invalid("the data blob must not be the ticket's lock blob").into());
    }
    if contents.len() > MAX_FENCED_BYTES {
        return Err(invalid(&format!(
            "contents are {} bytes; a fenced write takes at most {MAX_FENCED_BYTES}",
            contents.len()
        ))
        .into());
    }
    let presented = ticket.fencing_token;
    let by = lease_ends(ticket, client.runtime());
    let granted =
        RunRecord::from_metadata(&client.execute_by(&ticket.lock, &Inspect, Some(by))?.metadata)
            .fence;
    if presented > granted {
        return Err(invalid(&format!(
            "the ticket's fencing token {presented} was never granted on its lock (the last \
             granted is {granted}); nothing was written"
        ))
        .into());
    }
    if presented < granted {
        return Err(FencedError::Stale { presented, stored: granted });
    }
    let mut maybe_written = false;
    rounds(client, &target, contents, presented, by, &mut maybe_written).map_err(
        |error| {
            match error {
        FencedError::Failed(error) if maybe_written => FencedError::Failed(error.context(
            "the data may have been written, with this run's token, by an attempt whose answer \
             was lost: read it back (read-fenced) before writing again",
        )),
        other => other,
    }
        },
    )
}

/// The compare-and-swap rounds of a fenced write. `maybe_written` is set once a Put may have
/// landed without our hearing of it (an attempt that was retried, or one with no answer).
fn rounds<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    target: &Lock,
    contents: &[u8],
    presented: u64,
    by: crate::transport::Deadline,
    maybe_written: &mut bool,
) -> Result<FencedWrite, FencedError> {
    let metadata = vec![(FENCING_TOKEN_METADATA.to_string(), presented.to_string())];
    for _ in 0..MAX_ROUNDS {
        let condition = match client.execute_by(target, &Inspect, Some(by)) {
            Ok(status) => {
                // The lock blob's record (record.rs); a lock blob of any lock in the container.
                if status.metadata.iter().any(|(key, _)| key.eq_ignore_ascii_case("tc_fence")) {
                    return Err(invalid(
                        "the data blob is a lock blob (it keeps a run record); \
                                        writing it would erase the lock's fencing tokens",
                    )
                    .into());
                }
                let stored = stored_token(&status.metadata)
                    .map_err(|m| invalid(&format!("{m}; nothing was written")))?;
                if stored > presented {
                    return Err(FencedError::Stale { presented, stored });
                }
                let etag = status.etag.ok_or_else(|| unexpected(target, "no ETag"))?;
                WriteCondition::IfMatch(etag)
            }
            Err(Error::NotFound(_)) => WriteCondition::IfAbsent,
            Err(error) => return Err(error.into()),
        };
        let put = PutBlob { contents, metadata: metadata.clone(), condition };
        let attempts_before = client.round_trips();
        let written = client.execute_by(target, &put, Some(by));
        let retried = client.round_trips() - attempts_before > 1;
        *maybe_written |= retried || written.as_ref().is_err_and(crate::client::outcome_unknown);
        match written? {
            PutOutcome::Written(etag) => {
                let name = target.blob.clone();
                return Ok(FencedWrite { name, fencing_token: presented, etag });
            }
            PutOutcome::ChangedSince => continue,
        }
    }
    let nothing = if *maybe_written { "" } else { "; nothing was written" };
    Err(Error::Contended(Contention {
        attempts: MAX_ROUNDS,
        message: format!(
            "the data blob changed between each look and write, {MAX_ROUNDS} times: other \
             writers keep writing it{nothing}"
        ),
    })
    .into())
}

/// Reads blob `name` in `container` with the fencing token kept with it; `None` when the blob
/// or the container does not exist. One GET.
pub fn read_fenced<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    account: &Account,
    container: &str,
    name: &str,
) -> Result<Option<FencedData>, Error> {
    let target = data_blob(account, container, name)?;
    match client.execute(&target, &GetBlob) {
        Ok(blob) => Ok(Some(FencedData {
            fencing_token: stored_token(&blob.metadata).map_err(|m| unexpected(&target, &m))?,
            contents: blob.contents,
            etag: blob.etag,
        })),
        Err(Error::NotFound(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// The data blob, with the same name rules as a lock blob.
fn data_blob(account: &Account, container: &str, name: &str) -> Result<Lock, Error> {
    Lock::new(account.clone(), container, name)
}

/// The token kept on a data blob: 0 if none (not written by a fenced write, so any run may
/// take it over). An unreadable one refuses rather than guess: reading it as 0 would let any
/// run overwrite, and as the largest would lock every run out.
fn stored_token(metadata: &[(String, String)]) -> Result<u64, String> {
    let Some((_, value)) =
        metadata.iter().find(|(key, _)| key.eq_ignore_ascii_case(FENCING_TOKEN_METADATA))
    else {
        return Ok(0);
    };
    value
        .parse()
        .map_err(|_| format!("the data blob's {FENCING_TOKEN_METADATA} metadata is not a number"))
}

fn invalid(message: &str) -> Error {
    Error::InvalidArgument(message.to_string())
}

fn unexpected(target: &Lock, what: &str) -> Error {
    Error::UnexpectedAnswer(format!("the data blob {:?}: {what}", target.blob))
}
