//! `traffic-cop:lease/lease@1.0.0`: the raw lease verbs and `get-token`, each converting its
//! WIT values to the crate's validated types, making one call of the core, and converting back.

use super::convert::{self, error};
use super::exports::traffic_cop::lease1_0_0::lease as wl;
use super::{client, Component};
use crate::config::Account;
use crate::error::Error;
use crate::ops::{BreakPeriod, LeaseDuration, LeaseGrant, LeaseId};

impl wl::Guest for Component {
    fn acquire(
        lock: wl::Lock,
        duration: wl::LeaseDuration,
        proposed_id: Option<String>,
    ) -> Result<wl::LeaseGrant, wl::Error> {
        let duration = match duration {
            wl::LeaseDuration::Fixed(seconds) => LeaseDuration::Fixed(seconds),
            wl::LeaseDuration::Infinite => LeaseDuration::Infinite,
        };
        let acquired = lock_of(&lock).and_then(|lock| {
            let proposed_id = proposed_id.as_deref().map(LeaseId::parse).transpose()?;
            client().acquire(&lock, duration, proposed_id)
        });
        acquired.map(grant).map_err(error)
    }

    fn renew(lock: wl::Lock, lease_id: String) -> Result<wl::LeaseGrant, wl::Error> {
        lock_of(&lock)
            .and_then(|lock| client().renew(&lock, &LeaseId::parse(&lease_id)?))
            .map(grant)
            .map_err(error)
    }

    fn change(
        lock: wl::Lock,
        lease_id: String,
        proposed_id: String,
    ) -> Result<wl::LeaseGrant, wl::Error> {
        lock_of(&lock)
            .and_then(|lock| {
                let (current, proposed) =
                    (LeaseId::parse(&lease_id)?, LeaseId::parse(&proposed_id)?);
                client().change(&lock, &current, &proposed)
            })
            .map(grant)
            .map_err(error)
    }

    fn release(lock: wl::Lock, lease_id: String) -> Result<(), wl::Error> {
        lock_of(&lock)
            .and_then(|lock| client().release(&lock, &LeaseId::parse(&lease_id)?))
            .map_err(error)
    }

    fn break_lease(lock: wl::Lock, break_period: Option<u32>) -> Result<u32, wl::Error> {
        lock_of(&lock)
            .and_then(|lock| client().break_lease(&lock, BreakPeriod(break_period)))
            .map_err(error)
    }

    fn inspect(lock: wl::Lock) -> Result<wl::LockStatus, wl::Error> {
        let status = lock_of(&lock).and_then(|lock| client().inspect(&lock)).map_err(error)?;
        Ok(wl::LockStatus {
            state: convert::lease_state(status.state),
            locked: status.locked,
            infinite: status.infinite,
            metadata: status.metadata,
            etag: status.etag,
            last_modified: status.last_modified,
        })
    }

    fn get_token(connection_string: String) -> Result<wl::AccessToken, wl::Error> {
        let account = Account::from_connection_string(&connection_string).map_err(error)?;
        match client().access_token(&account).map_err(error)? {
            Some(token) => Ok(wl::AccessToken { token: token.token, expires_on: token.expires_on }),
            None => Err(error(Error::InvalidConfig(
                "this connection string authorizes with a key or SAS: it has no token (add \
                 Authentication=… to use Entra ID)"
                    .into(),
            ))),
        }
    }
}

fn lock_of(lock: &wl::Lock) -> Result<crate::config::Lock, Error> {
    crate::config::Lock::parse(&lock.connection_string, &lock.container, &lock.blob)
}

fn grant(grant: LeaseGrant) -> wl::LeaseGrant {
    wl::LeaseGrant {
        lease_id: grant.lease_id.to_string(),
        etag: grant.etag,
        last_modified: grant.last_modified,
    }
}
