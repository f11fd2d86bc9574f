//! The fake's lease state machine: Azure's outcome matrix (shared/protocol.md §1.5) and the
//! passive transitions, evaluated lazily against the virtual clock as the service does.

use super::{error, Answer, Blob, Lease};
use std::time::{Duration, SystemTime};

impl Blob {
    pub(super) fn lease_action(
        &mut self,
        header: &dyn Fn(&str) -> Option<String>,
        now: SystemTime,
    ) -> Answer {
        let id = header("x-ms-lease-id").unwrap_or_default();
        let proposed = header("x-ms-proposed-lease-id").unwrap_or_default();
        let granted =
            |id: &str| (200, vec![("x-ms-lease-id".to_string(), id.to_string())], Vec::new());
        match (header("x-ms-lease-action").as_deref(), self.lease.clone()) {
            (Some("acquire"), lease) => {
                let seconds = header("x-ms-lease-duration").and_then(|d| d.parse::<i64>().ok());
                let seconds = match seconds {
                    Some(-1) => None,
                    Some(s @ 15..=60) => Some(s as u64),
                    _ => return error(400, "InvalidHeaderValue"),
                };
                match lease {
                    Lease::Leased { id: held, .. } if held != proposed => {
                        return error(409, "LeaseAlreadyPresent")
                    }
                    Lease::Breaking { id: held, .. } if held == proposed => {
                        return error(409, "LeaseIsBreakingAndCannotBeAcquired")
                    }
                    Lease::Breaking { .. } => return error(409, "LeaseAlreadyPresent"),
                    _ => {}
                }
                let expires = seconds.map(|s| now + Duration::from_secs(s));
                self.lease = Lease::Leased { id: proposed.clone(), expires, seconds };
                let (_, headers, body) = granted(&proposed);
                (201, headers, body)
            }
            (Some("renew"), Lease::Leased { id: held, seconds, .. }) if held == id => {
                self.lease = Lease::Leased {
                    id: held,
                    expires: seconds.map(|s| now + Duration::from_secs(s)),
                    seconds,
                };
                granted(&id)
            }
            (Some("renew"), Lease::Expired { id: held, seconds }) if held == id => {
                // Not written since it expired (a write would have reset it): renewable.
                self.lease = Lease::Leased {
                    id: held,
                    expires: seconds.map(|s| now + Duration::from_secs(s)),
                    seconds,
                };
                granted(&id)
            }
            (Some("renew"), Lease::Breaking { id: held, .. } | Lease::Broken { id: held })
                if held == id =>
            {
                error(409, "LeaseIsBrokenAndCannotBeRenewed")
            }
            (Some("renew"), _) => error(409, "LeaseIdMismatchWithLeaseOperation"),
            (Some("change"), Lease::Leased { id: held, expires, seconds })
                if held == id || held == proposed =>
            {
                self.lease = Lease::Leased { id: proposed.clone(), expires, seconds };
                granted(&proposed)
            }
            (Some("change"), Lease::Leased { .. }) => {
                error(409, "LeaseIdMismatchWithLeaseOperation")
            }
            (Some("change"), Lease::Breaking { id: held, .. }) if held == id => {
                error(409, "LeaseIsBreakingAndCannotBeChanged")
            }
            (Some("change"), Lease::Breaking { .. }) => {
                error(409, "LeaseIdMismatchWithLeaseOperation")
            }
            (Some("change"), _) => error(409, "LeaseNotPresentWithLeaseOperation"),
            (Some("release"), Lease::Available) => error(409, "LeaseIdMismatchWithLeaseOperation"),
            (
                Some("release"),
                Lease::Leased { id: held, .. }
                | Lease::Expired { id: held, .. }
                | Lease::Breaking { id: held, .. }
                | Lease::Broken { id: held },
            ) => {
                if held != id {
                    return error(409, "LeaseIdMismatchWithLeaseOperation");
                }
                self.lease = Lease::Available;
                (200, vec![], Vec::new())
            }
            (Some("break"), lease) => {
                self.break_lease(lease, header("x-ms-lease-break-period"), now)
            }
            _ => error(400, "InvalidHeaderValue"),
        }
    }

    fn break_lease(&mut self, lease: Lease, period: Option<String>, now: SystemTime) -> Answer {
        let period = period.and_then(|p| p.parse::<u64>().ok()).map(Duration::from_secs);
        let until = match (lease, period) {
            (Lease::Available, _) => return error(409, "LeaseNotPresentWithLeaseOperation"),
            (Lease::Leased { id, expires: None, .. }, Some(p)) if !p.is_zero() => {
                Some((id, now + p))
            }
            (Lease::Leased { id, expires: Some(end), .. }, None) => Some((id, end)),
            (Lease::Leased { id, expires: Some(end), .. }, Some(p)) if !p.is_zero() => {
                Some((id, end.min(now + p)))
            }
            (Lease::Breaking { id, until }, None) => Some((id, until)),
            (Lease::Breaking { id, until }, Some(p)) if !p.is_zero() => {
                Some((id, until.min(now + p)))
            }
            (
                Lease::Leased { id, .. }
                | Lease::Breaking { id, .. }
                | Lease::Expired { id, .. }
                | Lease::Broken { id },
                _,
            ) => {
                self.lease = Lease::Broken { id };
                None
            }
        };
        let seconds = until.as_ref().map_or(0, |(_, t)| {
            t.duration_since(now).unwrap_or_default().as_secs_f64().round() as u64
        });
        if let Some((id, until)) = until {
            self.lease = Lease::Breaking { id, until };
        }
        (202, vec![("x-ms-lease-time".into(), seconds.to_string())], Vec::new())
    }
}

/// The passive transitions, evaluated lazily as the service does.
pub(super) fn settle(lease: Lease, now: SystemTime) -> Lease {
    match lease {
        Lease::Leased { id, expires: Some(end), seconds } if now >= end => {
            Lease::Expired { id, seconds }
        }
        Lease::Breaking { id, until } if now >= until => Lease::Broken { id },
        other => other,
    }
}
