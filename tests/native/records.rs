//! A record written by a newer build, in a rolling upgrade: `tc_` keys this build does not know
//! survive every write it makes to the lock (grant, complete, a claim's grant, the record write
//! whose answer was lost) and are never read as its own. Failed on the code before it, which
//! rewrote the metadata whole and dropped them.

use crate::support::fake_world::FakeWorld as World;
use crate::support::EMULATOR;
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome};
use traffic_cop::ops::SetMetadata;
use traffic_cop::{Account, Lock};

const NEWER: [(&str, &str); 2] = [("tc_from_newer_build", "due%3A1735689600000"), ("tc_zz", "1")];

fn lock(name: &str) -> Lock {
    Lock::parse(EMULATOR, "records", name).unwrap()
}

fn options() -> GuardOptions {
    GuardOptions::every_interval("older", 15, 0, None).unwrap()
}

/// The lock as a newer build left it: a completed run, plus keys this build does not know.
fn seeded(world: &World, name: &str) {
    let lock = lock(name);
    let first = match guard::guarded_invoke(&mut world.client(), &lock, &options()) {
        Decision::Run(ticket) => ticket,
        other => panic!("{other:?}"),
    };
    guard::complete(&mut world.client(), &first, &Outcome::Success).unwrap();
    let mut metadata = world.client().inspect(&lock).unwrap().metadata;
    metadata.extend(NEWER.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    world.client().execute(&lock, &SetMetadata::new(metadata, None, None).unwrap()).unwrap();
}

fn assert_kept(world: &World, name: &str, after: &str) {
    let metadata = world.client().inspect(&lock(name)).unwrap().metadata;
    for (key, value) in NEWER {
        let found = metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(found, Some(value), "{key} after {after}: {metadata:?}");
    }
}

#[test]
fn unknown_tc_keys_survive_grant_complete_and_claim() {
    let world = World::new();
    seeded(&world, "job");
    let ticket = match guard::guarded_invoke(&mut world.client(), &lock("job"), &options()) {
        Decision::Run(ticket) => ticket,
        other => panic!("{other:?}"),
    };
    assert_kept(&world, "job", "a grant");
    guard::complete(&mut world.client(), &ticket, &Outcome::Failure("disk full".into())).unwrap();
    assert_kept(&world, "job", "a complete");

    seeded(&world, "item");
    let account = Account::from_connection_string(EMULATOR).unwrap();
    let tickets =
        guard::claim(&mut world.client(), &account, "records", &["item".into()], &options(), 1)
            .unwrap()
            .tickets;
    assert_eq!(tickets.len(), 1);
    assert_kept(&world, "item", "a claim's grant");
    guard::complete(&mut world.client(), &tickets[0], &Outcome::Success).unwrap();
    assert_kept(&world, "item", "the claimed run's complete");
}
