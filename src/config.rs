//! Storage accounts from Azure connection strings, and the lock (container + blob) they name.
//!
//! Everything here is validated once, when it is built, so the request path never meets a
//! malformed endpoint or name. Secrets (account key, SAS) are kept out of `Debug`.

use crate::error::Error;
use base64::Engine as _;
use std::fmt;

/// The well-known Azurite/Storage-Emulator account (Azurite README, "Default Storage Account").
pub const EMULATOR_ACCOUNT: &str = "devstoreaccount1";
/// The well-known, public emulator key; it is not a secret.
pub const EMULATOR_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
/// Where `UseDevelopmentStorage=true` points: Azurite's default blob port, path-style.
pub const EMULATOR_BLOB_ENDPOINT: &str = "http://127.0.0.1:10000/devstoreaccount1";

/// How requests are authorized.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// SharedKey: the decoded account key signs every request.
    SharedKey(Vec<u8>),
    /// A SAS token (query string without the leading `?`) appended to every request.
    Sas(String),
    /// Entra ID: `Authorization: Bearer`, with a token from the source (see [`crate::identity`]).
    Bearer(Box<crate::identity::Entra>),
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::SharedKey(_) => f.write_str("SharedKey(<redacted>)"),
            Credential::Sas(_) => f.write_str("Sas(<redacted>)"),
            Credential::Bearer(entra) => write!(f, "Bearer({entra:?})"),
        }
    }
}

thread_local! {
    /// The last connection string [`Account::from_connection_string`] read, and its account.
    static LAST_READ: std::cell::RefCell<Option<(String, Account)>> =
        const { std::cell::RefCell::new(None) };
}

#[cfg(test)]
thread_local! {
    /// How many times this thread parsed a connection string (for the unit tests).
    static PARSES: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A storage account's blob service: where to send requests and how to sign them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// Account name; it is part of the SharedKey canonical resource.
    pub name: String,
    /// `http` or `https`.
    pub scheme: String,
    /// `host[:port]`.
    pub authority: String,
    /// Path prefix of the blob endpoint without a trailing `/` (`/devstoreaccount1` for
    /// path-style emulator URLs, empty for `https://acct.blob.core.windows.net`).
    pub base_path: String,
    pub credential: Credential,
}

impl Account {
    /// Parses an Azure Storage connection string in the forms the Azure SDKs accept:
    /// `UseDevelopmentStorage=true`; `AccountName=…;AccountKey=…[;DefaultEndpointsProtocol=…]
    /// [;EndpointSuffix=…]`; an explicit `BlobEndpoint=…` with a key; or `BlobEndpoint=…;
    /// SharedAccessSignature=…`. Keys are matched case-insensitively; unrelated keys
    /// (`QueueEndpoint`, …) are ignored.
    ///
    /// An instance reads the same connection string on every call, so the last one read on
    /// this thread is kept with its account and not parsed again.
    pub fn from_connection_string(text: &str) -> Result<Account, Error> {
        let kept = LAST_READ.with_borrow(|last| {
            last.as_ref().filter(|(read, _)| read == text).map(|(_, account)| account.clone())
        });
        if let Some(account) = kept {
            return Ok(account);
        }
        let account = Account::parse(text)?;
        LAST_READ.with_borrow_mut(|last| *last = Some((text.to_string(), account.clone())));
        Ok(account)
    }

    fn parse(text: &str) -> Result<Account, Error> {
        #[cfg(test)]
        PARSES.set(PARSES.get() + 1);
        let fields = ConnectionFields::parse(text)?;
        if fields.get("UseDevelopmentStorage").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            if fields.get("DevelopmentStorageProxyUri").is_some() {
                return Err(config("DevelopmentStorageProxyUri is not supported"));
            }
            return Account::with_key(EMULATOR_BLOB_ENDPOINT, Some(EMULATOR_ACCOUNT), EMULATOR_KEY);
        }
        let name = fields.get("AccountName");
        let endpoint = match (fields.get("BlobEndpoint"), name) {
            (Some(endpoint), _) => endpoint.to_string(),
            (None, Some(name)) => {
                let protocol = fields.get("DefaultEndpointsProtocol").unwrap_or("https");
                let suffix = fields.get("EndpointSuffix").unwrap_or("core.windows.net");
                format!("{protocol}://{name}.blob.{suffix}")
            }
            (None, None) => return Err(config("needs AccountName or BlobEndpoint")),
        };
        let entra =
            crate::identity::Entra::from_fields(&|key| fields.get(key).map(str::to_string))?;
        if let Some(entra) = entra {
            return Account::with_bearer(&endpoint, name, entra);
        }
        match (fields.get("AccountKey"), fields.get("SharedAccessSignature")) {
            (Some(key), _) => Account::with_key(&endpoint, name, key),
            (None, Some(sas)) => Account::with_sas(&endpoint, name, sas),
            (None, None) => Err(config("needs AccountKey or SharedAccessSignature")),
        }
    }

    fn with_key(endpoint: &str, name: Option<&str>, key: &str) -> Result<Account, Error> {
        let key = base64::engine::general_purpose::STANDARD
            .decode(key.trim())
            .map_err(|_| config("AccountKey is not valid base64"))?;
        if key.is_empty() {
            return Err(config("AccountKey is empty"));
        }
        let name = name.ok_or_else(|| config("SharedKey needs AccountName"))?;
        Account::at(endpoint, name.to_string(), Credential::SharedKey(key))
    }

    fn with_sas(endpoint: &str, name: Option<&str>, sas: &str) -> Result<Account, Error> {
        let sas = sas.trim().trim_start_matches('?');
        if sas.is_empty() || sas.chars().any(|c| c.is_whitespace() || c.is_control() || c == '#') {
            return Err(config("SharedAccessSignature is malformed"));
        }
        let account = Account::at(endpoint, String::new(), Credential::Sas(sas.to_string()))?;
        // A SAS is not signed with the name, but errors and the board read better with it.
        let name = name.map(str::to_string).unwrap_or_else(|| account.guess_name());
        Ok(Account { name, ..account })
    }

    fn with_bearer(
        endpoint: &str,
        name: Option<&str>,
        entra: crate::identity::Entra,
    ) -> Result<Account, Error> {
        let account = Account::at(endpoint, String::new(), Credential::Bearer(Box::new(entra)))?;
        // Azure refuses bearer tokens over plain http, and a token must not cross the wire
        // in the clear.
        if account.scheme != "https" {
            return Err(config("Authentication needs an https:// BlobEndpoint"));
        }
        let name = name.map(str::to_string).unwrap_or_else(|| account.guess_name());
        Ok(Account { name, ..account })
    }

    fn at(endpoint: &str, name: String, credential: Credential) -> Result<Account, Error> {
        if !name.is_empty() && !is_account_name(&name) {
            return Err(config("AccountName must be 3-24 lowercase letters and digits"));
        }
        let uri: http::Uri =
            endpoint.trim().parse().map_err(|_| config("BlobEndpoint is not a URL"))?;
        let scheme = match uri.scheme_str() {
            Some(s @ ("http" | "https")) => s.to_string(),
            _ => return Err(config("BlobEndpoint must start with http:// or https://")),
        };
        let authority = uri.authority().ok_or_else(|| config("BlobEndpoint has no host"))?;
        if authority.as_str().contains('@') {
            return Err(config("BlobEndpoint must not carry user info"));
        }
        if uri.query().is_some() {
            return Err(config("BlobEndpoint must not carry a query; use SharedAccessSignature"));
        }
        Ok(Account {
            name,
            scheme,
            authority: authority.as_str().to_ascii_lowercase(),
            base_path: uri.path().trim_end_matches('/').to_string(),
            credential,
        })
    }

    /// The account name from a path-style (`/acct`) or host-style (`acct.blob…`) endpoint.
    fn guess_name(&self) -> String {
        let from_path = self.base_path.trim_start_matches('/');
        let candidate = if from_path.is_empty() {
            self.authority.split('.').next().unwrap_or_default()
        } else {
            from_path.split('/').next().unwrap_or_default()
        };
        candidate.to_string()
    }
}

fn is_account_name(name: &str) -> bool {
    (3..=24).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// `Key=Value;` pairs, split on the first `=` because SAS values contain `=`.
struct ConnectionFields(Vec<(String, String)>);

impl ConnectionFields {
    fn parse(text: &str) -> Result<ConnectionFields, Error> {
        let mut fields = Vec::new();
        for segment in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = segment
                .split_once('=')
                .ok_or_else(|| config("connection string segment without '='"))?;
            let (key, value) = (key.trim(), value.trim());
            if key.is_empty() || value.is_empty() {
                return Err(config("connection string has an empty key or value"));
            }
            fields.push((key.to_string(), value.to_string()));
        }
        if fields.is_empty() {
            return Err(config("connection string is empty"));
        }
        Ok(ConnectionFields(fields))
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
    }
}

/// A named lock: one blob in one container of one account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    pub account: Account,
    pub container: String,
    pub blob: String,
}

impl Lock {
    /// Validates the names against Azure's rules before anything is sent.
    pub fn new(account: Account, container: &str, blob: &str) -> Result<Lock, Error> {
        validate_container(container)?;
        validate_blob(blob)?;
        Ok(Lock { account, container: container.to_string(), blob: blob.to_string() })
    }

    /// Parses the connection string and validates the names.
    pub fn parse(connection_string: &str, container: &str, blob: &str) -> Result<Lock, Error> {
        Lock::new(Account::from_connection_string(connection_string)?, container, blob)
    }

    /// `base/container` as sent on the wire.
    pub fn container_path(&self) -> String {
        format!("{}/{}", self.account.base_path, self.container)
    }

    /// `base/container/blob` with the blob name percent-encoded per segment.
    pub fn blob_path(&self) -> String {
        format!(
            "{}/{}",
            self.container_path(),
            crate::percent::encode(&self.blob, crate::percent::path)
        )
    }
}

/// Container rules: 3-63 chars of lowercase letters, digits and single hyphens, starting and
/// ending with a letter or digit.
pub fn validate_container(name: &str) -> Result<(), Error> {
    let ok = (3..=63).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "container name must be 3-63 lowercase letters, digits and single inner hyphens".into(),
        ))
    }
}

/// Blob rules: 1-1024 characters, no control characters, and no `.`/`..`/empty path segments
/// (they would be normalised away by proxies and name a different blob).
pub fn validate_blob(name: &str) -> Result<(), Error> {
    let reason = if name.is_empty() || name.chars().count() > 1024 {
        Some("blob name must be 1-1024 characters")
    } else if name.chars().any(|c| c.is_control() || c == '\\') {
        Some("blob name must not contain control characters or backslashes")
    } else if name.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
        Some("blob name must not contain empty, '.' or '..' path segments")
    } else {
        None
    };
    reason.map_or(Ok(()), |r| Err(Error::InvalidArgument(r.into())))
}

fn config(reason: &str) -> Error {
    Error::InvalidConfig(reason.to_string())
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
