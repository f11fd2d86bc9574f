//! The one public error type, and the single place where an HTTP answer becomes an error.
//!
//! Variants say what the caller should do, not what went wrong on the wire. A non-2xx status
//! is an answer from the service; only a failed exchange is a [`TransportError`].

use crate::transport::TransportError;
use std::fmt;
use std::time::SystemTime;

/// What the service said when it refused a request. Carries no URL, header or body beyond the
/// error code and the first line of the message, so it cannot carry a credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceError {
    pub status: u16,
    /// `x-ms-error-code` (or `<Code>` from the body).
    pub code: Option<String>,
    /// `x-ms-request-id`, for support requests.
    pub request_id: Option<String>,
    /// The first line of the service's `<Message>`, or our own explanation.
    pub message: String,
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(code) = &self.code {
            write!(f, " {code}")?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        Ok(())
    }
}

/// Every way a lease call can fail.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Another holder has the lease: skip the work and try again later.
    HeldByOther(ServiceError),
    /// The lease is no longer ours, or may not be: stop the guarded work now. Whether the
    /// service said so or this code stopped because the lease's time ran out is in [`LeaseLoss`].
    LeaseLost(LeaseLoss),
    /// The container or blob does not exist (only acquire creates them).
    NotFound(ServiceError),
    /// The service refused the credential or the caller: a wrong key or SAS, a host clock more
    /// than 15 minutes off, an account that disallows Shared Key, a credential without the
    /// needed permission, or a firewall. The message names which, as far as the code tells.
    Unauthorized(ServiceError),
    /// The connection string or account settings are unusable. Nothing was sent.
    InvalidConfig(String),
    /// An argument is out of range or malformed. Nothing was sent.
    InvalidArgument(String),
    /// The service asked us to slow down (429, or `ServerBusy` with any status) and retries
    /// ran out. A 503 without `ServerBusy` (a proxy, a gateway) is a [`Error::Service`].
    Throttled(ServiceError),
    /// The exchange did not complete (connect, timeout, reset) and retries ran out.
    Transport(TransportError),
    /// Any other refusal from the service.
    Service(ServiceError),
    /// A guard option, or a part of its schedule, cannot be used; the field is named. Nothing
    /// was sent.
    BadOption(FieldError),
    /// Others kept changing what this call reads between each look and write, and it gave up:
    /// this code's decision, not the service's word.
    Contended(Contention),
    /// The service answered with success but without what the protocol promises (a missing
    /// `Date` header, an unreadable fencing token, a listing that repeats itself): refused rather
    /// than guessed. Says what was missing; nothing was changed by this call after it.
    UnexpectedAnswer(String),
    /// A bound this code keeps on one call was reached (a container listing longer than it
    /// reads); says which and what to do.
    LimitReached(String),
    /// The access token given in the connection string is expired or for another audience, as
    /// the token itself says. Nothing was sent.
    UnusableToken(UnusableToken),
}

/// Why a lease is lost: the service's word, or this code's because the time ran out.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseLoss {
    /// The service said the lease id no longer matches (expired and taken, broken, released, or
    /// never ours).
    Service(ServiceError),
    /// The time left on the lease ran out on this side, with no word from the service: it may
    /// already be someone else's.
    RanOut(RanOut),
}

/// A lease whose time ran out here, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RanOut {
    pub when: RanOutWhen,
    /// What ran out and what this code did about it.
    pub message: String,
}

/// When a lease's time ran out on this side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RanOutWhen {
    /// Before a call under it was sent: nothing was sent.
    BeforeSending,
    /// Between the attempts of a call (retries spent the time left).
    BetweenAttempts,
    /// The grant came back after its lease period: the run was not started.
    GrantedTooLate,
    /// While a claim granted other items: those runs were not handed out.
    DuringClaim,
    /// While `hold` renewed it: renewals kept failing until only its margin was left.
    WhileHolding,
    /// Its instance did not run when a renewal was due (a blocking call in the job, or a frozen
    /// host), and ran again only past `hold`'s stop line.
    Blocked,
}

/// A call that gave up because others kept moving what it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contention {
    /// How many times it looked and tried to write.
    pub attempts: u32,
    /// What kept moving, and what was (not) written.
    pub message: String,
}

/// An access token refused before anything was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnusableToken {
    pub problem: TokenProblem,
    /// What is wrong with it and how to get a usable one.
    pub message: String,
}

/// What the token says that makes it unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenProblem {
    Expired,
    WrongAudience,
}

impl fmt::Display for LeaseLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseLoss::Service(e) => write!(f, "{e}"),
            LeaseLoss::RanOut(r) => write!(f, "{}", r.message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::HeldByOther(e) => write!(f, "lease is held by another holder: {e}"),
            Error::LeaseLost(LeaseLoss::Service(e)) => write!(f, "lease lost or not ours: {e}"),
            Error::LeaseLost(LeaseLoss::RanOut(r)) => {
                write!(f, "lease time ran out here: {}", r.message)
            }
            Error::NotFound(e) => write!(f, "not found: {e}"),
            Error::Unauthorized(e) => write!(f, "unauthorized: {e}"),
            Error::InvalidConfig(m) => write!(f, "invalid configuration: {m}"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Throttled(e) => write!(f, "throttled by the service: {e}"),
            Error::Transport(e) => write!(f, "transport failure: {e}"),
            Error::Service(e) => write!(f, "service error: {e}"),
            Error::BadOption(e) => write!(f, "bad option: {e}"),
            Error::Contended(c) => {
                write!(f, "gave up after {} attempts: {}", c.attempts, c.message)
            }
            Error::UnexpectedAnswer(m) => write!(f, "unexpected answer: {m}"),
            Error::LimitReached(m) => write!(f, "limit reached: {m}"),
            Error::UnusableToken(t) => write!(f, "unusable access token: {}", t.message),
        }
    }
}

impl std::error::Error for Error {}

/// A guard option (or a schedule's part) that cannot be used: the field at fault, named as the
/// WIT names it (`lease-seconds`, `minute`, `time-zone`), and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: &'static str, message: String) -> FieldError {
        FieldError { field, message }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

/// A loopback address or name: an emulator on this machine (or a tunnel to one).
fn is_local(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The hint appended to an authorization failure whose code names no cause of its own,
/// because the service's message does not say which of the two usual causes applies.
pub const UNAUTHORIZED_HINT: &str =
    "check the account key or SAS, and that this host's clock is within 15 minutes of UTC";

/// What to do about a 401/403 whose error code names its cause.
fn unauthorized_hint(code: &str) -> &'static str {
    match code {
        "KeyBasedAuthenticationNotPermitted" => {
            "the storage account disallows Shared Key authorization (AllowSharedKeyAccess is \
             off), which also refuses SAS tokens signed with the account key: use a user \
             delegation SAS, or allow Shared Key access on the account"
        }
        "AuthorizationPermissionMismatch" => {
            "the credential is valid but lacks the permission for this operation: give the \
             identity the Storage Blob Data Contributor role, or use a SAS that grants read, \
             write, create and list (sp=rwcl) on the container"
        }
        // Azure answers a bearer token it cannot use with this code, and the reason in its
        // AuthenticationErrorDetail (expired, wrong audience, wrong tenant).
        "InvalidAuthenticationInfo" => BEARER_HINT,
        // Azurite also says AuthorizationFailure for a bad signature (protocol.md §6.2), so
        // the key stays among the suspects; `for_endpoint` puts it first on an emulator.
        "AuthorizationFailure" => AUTHORIZATION_FAILURE_HINT,
        _ => UNAUTHORIZED_HINT,
    }
}

const AUTHORIZATION_FAILURE_HINT: &str = "on Azure this usually means the account's firewall or \
     network rules do not admit this host (or the SAS is limited to other IP addresses); check \
     the account's networking settings. On Azurite it means a wrong account key or SAS";

/// The same code from an emulator on this machine or a loopback address, where no firewall
/// rule applies and Azurite answers a signature that does not match with it.
const EMULATOR_AUTHORIZATION_HINT: &str = "the signature did not match: a wrong account key \
     (or SAS) in the connection string; this is an emulator or loopback endpoint, where the \
     code means a wrong key rather than a firewall rule (on Azure it would name the account's \
     network rules)";

/// The generic hint's counterpart for a request authorized with a bearer token.
pub const BEARER_HINT: &str = "the bearer token was refused: it may have expired, be for another \
     audience (it must be for https://storage.azure.com/), or come from another tenant than the \
     account's; fetch a new one, or drop AccessToken to let traffic-cop fetch it";

impl Error {
    /// A refusal of a bearer-token request: the generic advice (a key, a SAS, the clock) does
    /// not apply to it.
    pub fn for_bearer(self) -> Error {
        match self {
            Error::Unauthorized(e) if e.message.ends_with(&format!("({UNAUTHORIZED_HINT})")) => {
                let message = e.message.replace(UNAUTHORIZED_HINT, BEARER_HINT);
                Error::Unauthorized(ServiceError { message, ..e })
            }
            Error::Unauthorized(e) if e.message == UNAUTHORIZED_HINT => {
                Error::Unauthorized(ServiceError { message: BEARER_HINT.into(), ..e })
            }
            other => other,
        }
    }

    /// Says what a refusal means at this endpoint: an `AuthorizationFailure` from an emulator
    /// or loopback address names the key first, and a request the host refused to send names
    /// the outbound-host permission it lacks and where that is set.
    pub fn for_endpoint(self, scheme: &str, authority: &str) -> Error {
        match self {
            Error::Unauthorized(e)
                if e.code.as_deref() == Some("AuthorizationFailure") && is_local(authority) =>
            {
                let message =
                    e.message.replace(AUTHORIZATION_FAILURE_HINT, EMULATOR_AUTHORIZATION_HINT);
                Error::Unauthorized(ServiceError { message, ..e })
            }
            Error::Transport(e) if e.kind == crate::transport::TransportErrorKind::Denied => {
                let detail = format!(
                    "the host refused to send the request to {scheme}://{authority}: it is not \
                     among the outbound hosts this component may call (Spin: add it to the \
                     importing component's allowed_outbound_hosts; traffic-cop's app and \
                     templates set that from the storage_endpoint variable, \
                     SPIN_VARIABLE_STORAGE_ENDPOINT, which must match the connection string's \
                     endpoint) ({})",
                    e.detail
                );
                Error::Transport(crate::transport::TransportError { detail, ..e })
            }
            other => other,
        }
    }

    /// Classifies a refusal. The lease-specific codes come first because they share 409/412
    /// with unrelated conflicts.
    pub fn from_service(error: ServiceError) -> Error {
        match (error.status, error.code.as_deref().unwrap_or("")) {
            (_, "LeaseAlreadyPresent" | "LeaseIsBreakingAndCannotBeAcquired") => {
                Error::HeldByOther(error)
            }
            (
                _,
                "LeaseIdMismatchWithLeaseOperation"
                | "LeaseNotPresentWithLeaseOperation"
                | "LeaseIsBrokenAndCannotBeRenewed"
                | "LeaseIsBreakingAndCannotBeChanged"
                | "LeaseAlreadyBroken"
                | "LeaseLost"
                | "LeaseIdMissing"
                | "LeaseIdMismatchWithBlobOperation"
                | "LeaseIdMismatchWithContainerOperation"
                | "LeaseNotPresentWithBlobOperation"
                | "LeaseNotPresentWithContainerOperation",
            ) => Error::LeaseLost(LeaseLoss::Service(error)),
            (404, _) => Error::NotFound(error),
            (401 | 403, code) => {
                let hint = unauthorized_hint(code);
                let message = if error.message.is_empty() {
                    hint.to_string()
                } else {
                    format!("{} ({hint})", error.message)
                };
                Error::Unauthorized(ServiceError { message, ..error })
            }
            // Only the service's own word is throttling: a bare 503 may come from a proxy or
            // gateway in front of it. (Retries still treat any 503 as passing, see retry.rs.)
            (429, _) | (_, "ServerBusy") => Error::Throttled(error),
            _ => Error::Service(error),
        }
    }

    /// Names clock skew as the cause of an authorization failure when the service's clock
    /// (`server`, from its `Date`) and ours (`sent`, our `x-ms-date`) are more than Azure's
    /// 15-minute window apart.
    pub fn with_clock_skew(self, sent: SystemTime, server: Option<SystemTime>) -> Error {
        let (Error::Unauthorized(error), Some(server)) = (&self, server) else { return self };
        let (minutes, direction) = match sent.duration_since(server) {
            Ok(ahead) => (ahead.as_secs() / 60, "ahead of"),
            Err(behind) => (behind.duration().as_secs() / 60, "behind"),
        };
        if minutes < 15 {
            return self;
        }
        Error::Unauthorized(ServiceError {
            message: format!(
                "clock skew: this host's clock is {minutes} minutes {direction} the storage \
                 service's, and Azure rejects requests more than 15 minutes off; {}",
                error.message
            ),
            ..error.clone()
        })
    }

    /// The same error, its message followed by `what happened` (what a failed call did do, so a
    /// caller told "failed" is not misled about the state it left).
    pub fn context(self, what_happened: &str) -> Error {
        let add = |message: String| {
            if message.is_empty() {
                what_happened.to_string()
            } else {
                format!("{message}; {what_happened}")
            }
        };
        let service = |e: ServiceError| ServiceError { message: add(e.message), ..e };
        match self {
            Error::HeldByOther(e) => Error::HeldByOther(service(e)),
            Error::LeaseLost(LeaseLoss::Service(e)) => {
                Error::LeaseLost(LeaseLoss::Service(service(e)))
            }
            Error::LeaseLost(LeaseLoss::RanOut(r)) => {
                Error::LeaseLost(LeaseLoss::RanOut(RanOut { message: add(r.message), ..r }))
            }
            Error::NotFound(e) => Error::NotFound(service(e)),
            Error::Unauthorized(e) => Error::Unauthorized(service(e)),
            Error::Throttled(e) => Error::Throttled(service(e)),
            Error::Service(e) => Error::Service(service(e)),
            Error::InvalidConfig(m) => Error::InvalidConfig(add(m)),
            Error::InvalidArgument(m) => Error::InvalidArgument(add(m)),
            Error::Transport(e) => Error::Transport(TransportError { detail: add(e.detail), ..e }),
            Error::BadOption(e) => Error::BadOption(FieldError { message: add(e.message), ..e }),
            Error::Contended(c) => Error::Contended(Contention { message: add(c.message), ..c }),
            Error::UnexpectedAnswer(m) => Error::UnexpectedAnswer(add(m)),
            Error::LimitReached(m) => Error::LimitReached(add(m)),
            Error::UnusableToken(t) => {
                Error::UnusableToken(UnusableToken { message: add(t.message), ..t })
            }
        }
    }

    /// The service error behind this error, if the service answered.
    pub fn service_error(&self) -> Option<&ServiceError> {
        match self {
            Error::HeldByOther(e)
            | Error::LeaseLost(LeaseLoss::Service(e))
            | Error::NotFound(e)
            | Error::Unauthorized(e)
            | Error::Throttled(e)
            | Error::Service(e) => Some(e),
            _ => None,
        }
    }
}

impl From<TransportError> for Error {
    fn from(error: TransportError) -> Error {
        Error::Transport(error)
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
