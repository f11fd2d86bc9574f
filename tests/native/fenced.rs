//! Fenced writes over the fake service on virtual time: the token kept with the data refuses
//! an older run's write, the same run may write again, a missing blob is created with
//! `If-None-Match`, bad writes send nothing, reads see the newest data, and no error carries a
//! secret. Races and time limits are in fenced_races.rs.

use crate::support;

use crate::fenced_support::*;
use crate::support::fake_world::FakeWorld as World;
use crate::support::hooked::Hooked;
use std::cell::RefCell;
use std::rc::Rc;
use traffic_cop::guard::{read_fenced, write_fenced, FencedError, MAX_FENCED_BYTES};
use traffic_cop::Error;

#[test]
fn a_newer_runs_write_refuses_an_older_runs_write() {
    let world = World::new();
    let first = run(&world, "a");
    write_fenced(&mut world.client(), &first, RESULT, b"from a").unwrap();
    let second = takeover(&world, &first, "b");
    let newer = write_fenced(&mut world.client(), &second, RESULT, b"from b").unwrap();
    assert_eq!(newer.fencing_token, second.fencing_token);

    // The first run resumes and writes: refused after one look, typed, nothing written.
    let mut client = world.client();
    match write_fenced(&mut client, &first, RESULT, b"late a") {
        Err(FencedError::Stale { presented, stored }) => {
            assert_eq!((presented, stored), (first.fencing_token, second.fencing_token))
        }
        other => panic!("expected a stale token, got {other:?}"),
    }
    assert_eq!(client.round_trips(), 1);
    let token = second.fencing_token.to_string();
    assert_eq!(stored(&world), Some((b"from b".to_vec(), Some(token))));

    let account = &first.lock.account;
    let read = read_fenced(&mut world.client(), account, CONTAINER, RESULT).unwrap().unwrap();
    assert_eq!((read.contents, read.fencing_token), (b"from b".to_vec(), second.fencing_token));
    assert_eq!(read.etag, newer.etag);
}

#[test]
fn a_missing_blob_is_created_then_the_same_run_writes_it_again() {
    let world = World::new();
    let ticket = run(&world, "a");
    let sent: Sent = Rc::new(RefCell::new(Vec::new()));
    let log = sent.clone();
    let hooked = Hooked::new(world.service.clone()).before(move |_, request, _| {
        log.borrow_mut().push(request.clone());
        None
    });
    let mut client = world.client_over(hooked);
    let created = write_fenced(&mut client, &ticket, RESULT, b"one").unwrap();
    let rewritten = write_fenced(&mut client, &ticket, RESULT, b"two, longer").unwrap();
    assert_ne!(created.etag, rewritten.etag);
    assert_eq!((rewritten.name.as_str(), rewritten.fencing_token), (RESULT, ticket.fencing_token));
    let token = ticket.fencing_token.to_string();
    assert_eq!(stored(&world), Some((b"two, longer".to_vec(), Some(token))));

    // Three round trips each: the look at the lock (its record: is this run the newest?), the
    // look at the data, then the write conditional on what it saw.
    let sent = sent.borrow();
    let shapes: Vec<String> = sent.iter().map(shape).collect();
    assert_eq!(shapes, ["HEAD", "HEAD", "PUT if-none-match", "HEAD", "HEAD", "PUT if-match"]);
    assert!(sent[0].uri().path().ends_with("/daily") && sent[1].uri().path().ends_with(RESULT));
    assert_eq!(header(&sent[2], "if-none-match").as_deref(), Some("*"));
    assert_eq!(header(&sent[5], "if-match"), created.etag);
    for put in [&sent[2], &sent[5]] {
        assert_eq!(header(put, "x-ms-blob-type").as_deref(), Some("BlockBlob"));
        assert_eq!(header(put, "content-length"), Some(put.body().len().to_string()));
        assert_eq!(
            header(put, "x-ms-meta-tc_fencing_token"),
            Some(ticket.fencing_token.to_string())
        );
    }
}

#[test]
fn data_without_a_token_is_taken_over_and_an_unreadable_token_is_refused() {
    let world = World::new();
    let ticket = run(&world, "a");
    world.service.seed_blob(CONTAINER, RESULT, &[("owner", "someone")]);
    write_fenced(&mut world.client(), &ticket, RESULT, b"mine").unwrap();
    assert_eq!(stored(&world).unwrap().0, b"mine");

    world.service.seed_blob(CONTAINER, RESULT, &[("tc_fencing_token", "7x")]);
    match write_fenced(&mut world.client(), &ticket, RESULT, b"again") {
        Err(FencedError::Failed(Error::InvalidArgument(message))) => {
            assert!(message.contains("not a number"), "{message}")
        }
        other => panic!("expected invalid-argument, got {other:?}"),
    }
    assert_eq!(stored(&world).unwrap(), (Vec::new(), Some("7x".into())));
}

#[test]
fn bad_writes_send_nothing_and_lock_blobs_are_never_overwritten() {
    let world = World::new();
    let ticket = run(&world, "a");
    let too_big = vec![0u8; MAX_FENCED_BYTES + 1];
    let before = world.service.requests();
    let refusals = [
        (RESULT, too_big.as_slice()),
        ("daily", b"x".as_slice()),
        ("", b"x".as_slice()),
        ("a/../b", b"x".as_slice()),
        ("a//b", b"x".as_slice()),
        ("tab\there", b"x".as_slice()),
    ];
    for (name, contents) in refusals {
        match write_fenced(&mut world.client(), &ticket, name, contents) {
            Err(FencedError::Failed(Error::InvalidArgument(_))) => {}
            other => panic!("{name:?}: expected invalid-argument, got {other:?}"),
        }
    }
    assert_eq!(world.service.requests(), before);
    write_fenced(&mut world.client(), &ticket, RESULT, &vec![1u8; MAX_FENCED_BYTES]).unwrap();

    // Another lock's blob in the container: seen by its run record, and left alone.
    let other = traffic_cop::Lock::parse(support::EMULATOR, CONTAINER, "weekly").unwrap();
    let options = traffic_cop::guard::GuardOptions::every_interval("w", 15, 0, None).unwrap();
    traffic_cop::guard::guarded_invoke(&mut world.client(), &other, &options);
    let record = world.service.peek(CONTAINER, "weekly", "tc_fence");
    match write_fenced(&mut world.client(), &ticket, "weekly", b"oops") {
        Err(FencedError::Failed(Error::InvalidArgument(message))) => {
            assert!(message.contains("lock blob"), "{message}")
        }
        other => panic!("expected invalid-argument, got {other:?}"),
    }
    assert_eq!(world.service.peek(CONTAINER, "weekly", "tc_fence"), record);
}

#[test]
fn reads_say_none_for_a_missing_blob_or_container() {
    let world = World::new();
    let ticket = run(&world, "a");
    let account = &ticket.lock.account;
    assert_eq!(read_fenced(&mut world.client(), account, CONTAINER, "nothing").unwrap(), None);
    assert_eq!(read_fenced(&mut world.client(), account, "elsewhere", RESULT).unwrap(), None);
    match read_fenced(&mut world.client(), account, "Bad_Container", RESULT) {
        Err(Error::InvalidArgument(_)) => {}
        other => panic!("expected invalid-argument, got {other:?}"),
    }
}

#[test]
fn no_error_carries_a_secret_even_when_the_server_echoes_the_request() {
    let world = World::new();
    let ticket = run(&world, "a");
    let signatures = Rc::new(RefCell::new(Vec::new()));
    let seen = signatures.clone();
    let hooked = Hooked::new(world.service.clone()).before(move |_, request, _| {
        let auth = header(request, "authorization").unwrap();
        seen.borrow_mut().push(auth.rsplit(':').next().unwrap().to_string());
        let body = format!("<Error><Code>AuthenticationFailed</Code><Message>you sent {auth} to {}</Message></Error>", request.uri());
        Some(Ok(http::Response::builder()
            .status(403)
            .header("x-ms-error-code", "AuthenticationFailed")
            .body(body.into_bytes())
            .unwrap()))
    });
    let error = write_fenced(&mut world.client_over(hooked), &ticket, RESULT, b"x").unwrap_err();
    assert!(matches!(error, FencedError::Failed(Error::Unauthorized(_))), "{error:?}");
    let text = format!("{error:?} {error}");
    let key = support::EMULATOR.split("AccountKey=").nth(1).unwrap().split(';').next().unwrap();
    assert!(!text.contains(key), "{text}");
    for signature in signatures.borrow().iter() {
        assert!(!text.contains(signature.as_str()), "{text}");
    }
}

#[test]
fn results_are_not_locks_on_the_board() {
    let world = World::new();
    let first = run(&world, "a");
    write_fenced(&mut world.client(), &first, RESULT, b"from a").unwrap();
    let account = &first.lock.account;
    let board = traffic_cop::guard::board(&mut world.client(), account, CONTAINER).unwrap();
    let names: Vec<&str> = board.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, [first.lock.blob.as_str()], "the data blob is not a lock");
}
