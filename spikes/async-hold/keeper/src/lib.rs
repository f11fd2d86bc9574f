//! The keeper: `ticket.hold` renews on a WASI 0.3 timer with an async outgoing request.

wit_bindgen::generate!({ world: "keeper-provider", path: "wit" });

use exports::spike::keeper::keeper::{Guest, GuestTicket};
use std::cell::Cell;
use wasip3::http::types::{Fields, Method, Request, Scheme};

struct Keeper;

struct Ticket {
    url: String,
    period_ms: u32,
    renewals: Cell<u32>,
}

export!(Keeper);

impl Guest for Keeper {
    type Ticket = Ticket;
}

impl GuestTicket for Ticket {
    fn new(url: String, period_ms: u32) -> Ticket {
        Ticket { url, period_ms, renewals: Cell::new(0) }
    }

    async fn hold(&self, max: u32) -> u32 {
        // Says when the caller gave the call up: the component model cancels the subtask, and
        // wit-bindgen drops this future (and so this guard) at that point.
        let _cancelled = OnDrop(&self.renewals);
        while self.renewals.get() < max {
            wasip3::clocks::monotonic_clock::wait_for(u64::from(self.period_ms) * 1_000_000).await;
            let n = self.renewals.get() + 1;
            match renew(&self.url, n).await {
                Ok(status) => eprintln!("keeper: renewal {n} answered {status}"),
                Err(e) => eprintln!("keeper: renewal {n} failed: {e}"),
            }
            self.renewals.set(n);
        }
        self.renewals.get()
    }

    fn renewals(&self) -> u32 {
        self.renewals.get()
    }
}

/// GET `url?n=<n>` (http://host:port/path only).
async fn renew(url: &str, n: u32) -> Result<u16, String> {
    let rest = url.strip_prefix("http://").ok_or("http:// only")?;
    let (authority, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
    let (trailers_tx, trailers) = wasip3::wit_future::new(|| Ok(None));
    drop(trailers_tx);
    let (request, _sent) = Request::new(Fields::new(), None, trailers, None);
    request.set_method(&Method::Get).map_err(|_| "method")?;
    request.set_scheme(Some(&Scheme::Http)).map_err(|_| "scheme")?;
    request.set_authority(Some(authority)).map_err(|_| "authority")?;
    request.set_path_with_query(Some(&format!("{path}?n={n}"))).map_err(|_| "path")?;
    let response = wasip3::http::client::send(request).await.map_err(|e| format!("{e:?}"))?;
    Ok(response.get_status_code())
}

struct OnDrop<'a>(&'a Cell<u32>);

impl Drop for OnDrop<'_> {
    fn drop(&mut self) {
        eprintln!("keeper: hold's future dropped after {} renewals", self.0.get());
    }
}
