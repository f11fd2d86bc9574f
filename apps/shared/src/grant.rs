//! What a run's report needs from its grant, whichever guard version granted it. Its own module
//! because both the run (`tick`, `holding`) and the result write (`result`) use it.

use crate::{guard, guard_v4};

/// What a run's report says about its grant, whichever guard version granted it.
pub struct Grant {
    pub fencing_token: u64,
    pub past_due: guard::PastDue,
    pub manual_by: Option<String>,
    pub previous_abandoned: bool,
}

impl Grant {
    /// A guard@0.3.0 ticket's grant.
    pub fn of(ticket: &guard::Ticket) -> Grant {
        Grant {
            fencing_token: ticket.fencing_token,
            past_due: ticket.past_due,
            manual_by: ticket.manual_by.clone(),
            previous_abandoned: ticket.previous_abandoned,
        }
    }

    /// A guard@0.4.0 ticket's grant.
    pub fn of_v4(ticket: &guard_v4::Ticket) -> Grant {
        let details = ticket.details();
        Grant {
            fencing_token: details.fencing_token,
            past_due: details.past_due,
            manual_by: details.manual_by,
            previous_abandoned: details.previous_abandoned,
        }
    }
}
