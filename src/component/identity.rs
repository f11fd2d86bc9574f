//! `traffic-cop:lease/identity@0.2.0`: a bearer token the host can keep across invocations.

use super::{client, Component};
use crate::config::Account;
use crate::error::Error;

use super::exports::traffic_cop::lease0_1_0::lease::LeaseError;
use super::exports::traffic_cop::lease0_2_0::identity::{AccessToken, Guest};

impl Guest for Component {
    fn get_token(connection_string: String) -> Result<AccessToken, LeaseError> {
        let account = Account::from_connection_string(&connection_string)?;
        match client().access_token(&account)? {
            Some(token) => Ok(AccessToken { token: token.token, expires_on: token.expires_on }),
            None => Err(Error::InvalidConfig(
                "this connection string authorizes with a key or SAS: it has no token (add \
                 Authentication=… to use Entra ID)"
                    .into(),
            )
            .into()),
        }
    }
}
