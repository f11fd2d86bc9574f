//! Entra ID on the client: the token for an account, from what the caller passed, what this
//! client (or its instance) kept, or a fresh request to the identity endpoint.

use super::{lease_time_ran_out, LeaseClient};
use crate::config::{Account, Credential};
use crate::error::Error;
use crate::identity::{self, AccessToken, Entra, TokenSource};
use crate::retry::should_retry;
use crate::transport::{Deadline, Runtime, Transport};

impl<T: Transport, R: Runtime> LeaseClient<T, R> {
    /// The bearer token for `account` if it authorizes with Entra ID (`None` for a key or SAS):
    /// the caller's if it has five minutes left, else one this client fetched, else a new one
    /// (one round trip to the identity endpoint, retried like any request).
    pub fn access_token(&mut self, account: &Account) -> Result<Option<AccessToken>, Error> {
        self.access_token_by(account, None)
    }

    pub(super) fn access_token_by(
        &mut self,
        account: &Account,
        by: Option<Deadline>,
    ) -> Result<Option<AccessToken>, Error> {
        let Credential::Bearer(entra) = &account.credential else { return Ok(None) };
        let now = crate::guard::unix_ms(self.runtime.now()) / 1000;
        if let Some(token) = &entra.supplied {
            let usable = token.fresh_at(now) && identity::check_supplied(token, now).is_ok();
            if usable || entra.source == TokenSource::Supplied {
                identity::check_supplied(token, now)?;
                return Ok(Some(token.clone()));
            }
        }
        if let Some(token) = self.tokens.get(&entra.source, now) {
            return Ok(Some(token));
        }
        let token = self.fetch_token(entra, by)?;
        self.tokens.put(entra.source.clone(), token.clone());
        Ok(Some(token))
    }

    fn fetch_token(&mut self, entra: &Entra, by: Option<Deadline>) -> Result<AccessToken, Error> {
        let mut attempt = 1;
        let outcome = loop {
            let timeouts = match by.map(|by| by.left(&self.runtime)) {
                None => self.timeouts,
                Some(Some(left)) => self.timeouts.within(left),
                Some(None) => return Err(lease_time_ran_out(attempt > 1)),
            };
            let request = identity::token_request(&entra.source).ok_or_else(|| {
                Error::InvalidConfig("the token endpoint's address is not a valid URL".into())
            })?;
            let outcome = self.transport.send(request, timeouts);
            self.round_trips += 1;
            if attempt >= self.retry.max_attempts || !should_retry(&outcome) {
                break outcome;
            }
            let wait = self.retry.delay(attempt, &self.runtime);
            if by.is_some_and(|by| by.left(&self.runtime).is_none_or(|left| wait >= left)) {
                break outcome;
            }
            self.runtime.sleep(wait);
            attempt += 1;
        };
        let now = crate::guard::unix_ms(self.runtime.now()) / 1000;
        match outcome {
            Ok(response) => identity::interpret(entra, &response, now),
            Err(error) => Err(identity::unreachable(entra, error)),
        }
    }
}

/// `Bearer <token>`, marked sensitive so hosts and `http` keep it out of their logs.
pub(super) fn bearer_header(token: &AccessToken) -> http::HeaderValue {
    // The token was checked to be printable ASCII when it was read.
    let mut value = http::HeaderValue::from_str(&format!("Bearer {}", token.token))
        .unwrap_or_else(|_| http::HeaderValue::from_static("Bearer"));
    value.set_sensitive(true);
    value
}
