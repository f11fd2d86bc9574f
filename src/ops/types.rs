//! Values the lease verbs take and return, each validated when it is made.

use crate::error::Error;
use crate::transport::Runtime;
use std::fmt;
use std::time::SystemTime;

/// A lease id: a GUID in its 36-character hyphenated form. The service treats it as opaque, but
/// it rejects non-GUIDs, so we do too before anything is sent.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct LeaseId(String);

impl LeaseId {
    pub fn parse(text: &str) -> Result<LeaseId, Error> {
        let bytes = text.as_bytes();
        let well_formed = bytes.len() == 36
            && bytes.iter().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => *b == b'-',
                _ => b.is_ascii_hexdigit(),
            });
        if well_formed {
            // Case is kept: Azurite compares ids case-sensitively, so a lease taken by another
            // client with an upper-case id must be addressed exactly as it was taken.
            Ok(LeaseId(text.to_string()))
        } else {
            Err(Error::InvalidArgument(
                "lease id must be a GUID like 8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e".into(),
            ))
        }
    }

    /// A fresh version-4 GUID.
    pub fn random(runtime: &dyn Runtime) -> LeaseId {
        let (a, b) = (runtime.random_u64(), runtime.random_u64());
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_be_bytes());
        bytes[8..].copy_from_slice(&b.to_be_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        LeaseId(format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LeaseId({})", self.0)
    }
}

/// How long an acquired lease lasts without renewal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseDuration {
    /// 15 to 60 seconds.
    Fixed(u32),
    /// Until released or broken. A crashed holder then blocks everyone until someone breaks it.
    Infinite,
}

impl LeaseDuration {
    pub fn validate(self) -> Result<LeaseDuration, Error> {
        match self {
            LeaseDuration::Fixed(15..=60) | LeaseDuration::Infinite => Ok(self),
            LeaseDuration::Fixed(other) => Err(Error::InvalidArgument(format!(
                "lease duration must be 15..=60 seconds or infinite, got {other}"
            ))),
        }
    }

    /// How long it lasts, in words for an error message.
    pub(crate) fn describe(self) -> String {
        match self {
            LeaseDuration::Fixed(seconds) => format!("within {seconds} s"),
            LeaseDuration::Infinite => "never: break it".into(),
        }
    }

    pub(crate) fn header_value(self) -> String {
        match self {
            LeaseDuration::Fixed(seconds) => seconds.to_string(),
            LeaseDuration::Infinite => "-1".to_string(),
        }
    }
}

/// How long a break lets the current holder keep the lease: `None` lets a fixed lease run to
/// its end (and breaks an infinite one at once); `Some(0..=60)` caps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakPeriod(pub Option<u32>);

impl BreakPeriod {
    pub fn validate(self) -> Result<BreakPeriod, Error> {
        match self.0 {
            None | Some(0..=60) => Ok(self),
            Some(other) => Err(Error::InvalidArgument(format!(
                "break period must be 0..=60 seconds, got {other}"
            ))),
        }
    }
}

/// A lease the service granted (acquire, renew, change).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseGrant {
    pub lease_id: LeaseId,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// The service's `Date`: the one clock all replicas share.
    pub server_time: Option<SystemTime>,
}

/// The service's lease states (`x-ms-lease-state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseState {
    Available,
    Leased,
    Expired,
    Breaking,
    Broken,
}

impl LeaseState {
    pub(crate) fn parse(text: &str) -> Option<LeaseState> {
        Some(match text {
            "available" => LeaseState::Available,
            "leased" => LeaseState::Leased,
            "expired" => LeaseState::Expired,
            "breaking" => LeaseState::Breaking,
            "broken" => LeaseState::Broken,
            _ => return None,
        })
    }
}

/// What `inspect` learns from one HEAD of the lock blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockStatus {
    pub state: LeaseState,
    /// `locked` while leased or breaking.
    pub locked: bool,
    /// Present while locked: fixed (`Some(false)`) or infinite (`Some(true)`).
    pub infinite: Option<bool>,
    /// `x-ms-meta-*` pairs with the prefix removed, sorted by name.
    pub metadata: Vec<(String, String)>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// The service's `Date` when it answered.
    pub server_time: Option<SystemTime>,
    /// When the blob was created (`x-ms-creation-time`), if the service said.
    pub created: Option<SystemTime>,
}
