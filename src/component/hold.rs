//! `traffic-cop:lease/hold@0.5.0` (the async component only): a 1.0 `run`'s lease renewed in the
//! background over WASI 0.3 while the job works.

use super::convert::error;
use super::exports::traffic_cop::lease0_5_0::hold::Guest;
use super::exports::traffic_cop::lease1_0_0::guard::RunBorrow;
use super::exports::traffic_cop::lease1_0_0::lease as wl;
use super::guard::GrantedRun;
use super::{client, Component};
use crate::error::{Error, LeaseLoss, RanOutWhen};
use crate::guard as core;
use crate::wasi_http_async::WasiHttpAsync;

impl Guest for Component {
    async fn hold(run: RunBorrow<'_>) -> Result<(), wl::Error> {
        let run: &GrantedRun = run.get();
        let mut client = client();
        let held = core::hold(&mut client, &mut WasiHttpAsync, &run.ticket, &run.held).await;
        if let Err(Error::LeaseLost(LeaseLoss::RanOut(stop))) = &held {
            if stop.when == RanOutWhen::Blocked {
                // The job is told to stop and its run is left to the next grant to close as
                // abandoned: the lock still learns that this one was blocked.
                core::note_blocked(
                    &mut client,
                    &run.ticket.lock,
                    run.ticket.fencing_token,
                    &stop.message,
                );
            }
        }
        if let Err(lost) = &held {
            run.note(lost);
        }
        held.map_err(error)
    }
}
