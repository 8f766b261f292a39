//! Kafka's share consumer system tests (tests/kafkatest/tests/client/share_consumer_test.py)
//! against the real broker, driving `verifiable-share-consumer` processes — ours, Kafka's Java
//! `VerifiableShareConsumer`, both in one share group, and both beside librdkafka's share consumer
//! (tests/peers/verifiable_share_consumer.py) — and judging them only by their JSON
//! event lines, as kafkatest's `verifiable_share_consumer.py` does ([`events`], [`driver`]), plus
//! what kafkatest cannot see: every record the producer had acknowledged accepted exactly once,
//! counted per (partition, offset) from the `offsets_acknowledged` lines with `success` true, and
//! every record consumed more than once explained (its member was killed, its acknowledgement
//! failed, or a Java or librdkafka member stopped between a poll and its acknowledgement). Records held by a
//! member killed before it said are "in doubt"; the broker's share lag of 0 at the end says they
//! were taken.
//!
//! - `consume_all_*` (`test_share_single_topic_partition`, `test_share_multiple_partitions`):
//!   everything produced accepted once, every member consuming and acknowledging some of it.
//! - `member_kill_restart_*` (`test_share_consumer_failure` with restarts): members SIGKILLed
//!   under load, one then two at once, and started again.
//! - `clean_bounce_*` (`test_share_consumer_bounce`, clean): every member restarted with SIGTERM
//!   one at a time (rolling), then all at once.
//! - `*_ours` three of ours, `*_java` three of Java's, `*_mixed` two of each in one share group,
//!   `*_with_librdkafka` two of each and one of librdkafka's.
//! - [`lines`]: ours and Java's tool print the same lines for the same records.
//!
//! Smaller than Kafka's: three partitions on the one-node shared cluster, 500 ms heartbeats, 6 s
//! sessions, a 10 s record lock, a producer at 300 records/s. The broker scenarios
//! (`test_broker_rolling_bounce`, `test_broker_failure`) need a three-node cluster of their own
//! and are not here.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod driver;
mod events;
mod lines;

use driver::{Impl, Scenario};
use mooring_testkit::Cluster;

const OURS: [Impl; 3] = [Impl::Mooring; 3];
const JAVA: [Impl; 3] = [Impl::Java; 3];
const MIXED: [Impl; 4] = [Impl::Mooring, Impl::Java, Impl::Mooring, Impl::Java];
/// Member 2, killed with a Java member in `member_kill_restart`, is librdkafka's.
const WITH_LIBRDKAFKA: [Impl; 5] = [
    Impl::Mooring,
    Impl::Java,
    Impl::Librdkafka,
    Impl::Mooring,
    Impl::Java,
];

/// Runs `scenario`, printing every member's stderr if it fails.
fn run(s: &mut Scenario<'_>, scenario: impl FnOnce(&mut Scenario<'_>)) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scenario(s)));
    if let Err(panic) = outcome {
        eprintln!("{}: members' stderr:\n{}", s.name, s.stderr());
        std::panic::resume_unwind(panic);
    }
}

// ---- consume all ---------------------------------------------------------------------------

/// The members start, then a producer writes 3000 records at 300/s: every one is accepted
/// exactly once, as many are acknowledged as were produced, and every member consumed and
/// acknowledged some.
fn consume_all(name: &str, imps: &[Impl]) {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, 3, imps);
    run(&mut s, |s| {
        s.start_all();
        s.await_all_members();
        s.start_producer(Some(3000), 300);
        s.await_producer_done();
        s.drain();
        s.stop_all();
        let verdict = s.verdict();
        verdict.assert_all_accepted_once(name);
        verdict.assert_every_member_worked(name);
    });
}

#[test]
fn consume_all_ours() {
    consume_all("all-ours", &OURS);
}

#[test]
fn consume_all_java() {
    consume_all("all-java", &JAVA);
}

/// Two of ours and two of Java's in one share group.
#[test]
fn consume_all_mixed() {
    consume_all("all-mixed", &MIXED);
}

#[test]
fn consume_all_with_librdkafka() {
    consume_all("all-rdk", &WITH_LIBRDKAFKA);
}

// ---- members killed ------------------------------------------------------------------------

/// Under a producer at 300/s, member 0 is SIGKILLed, the others go on, it starts again; then
/// members 1 and 2 are SIGKILLed together and start again. Nothing is lost, nothing accepted
/// twice; what the killed members held comes again.
fn member_kill_restart(name: &str, imps: &[Impl]) {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, 3, imps);
    run(&mut s, |s| {
        s.start_producer(None, 300);
        s.start_all();
        s.await_all_members();
        s.await_consumed(300);
        for victims in [&[0][..], &[1, 2][..]] {
            for &i in victims {
                s.stop(i, false);
            }
            s.await_consumed(300);
            for &i in victims {
                s.start(i);
            }
            s.await_all_members();
            for &i in victims {
                s.await_consumed_by(i);
            }
        }
        s.drain();
        s.stop_all();
        s.verdict().assert_sound(name);
    });
}

#[test]
fn member_kill_restart_ours() {
    member_kill_restart("kill-ours", &OURS);
}

#[test]
fn member_kill_restart_java() {
    member_kill_restart("kill-java", &JAVA);
}

#[test]
fn member_kill_restart_mixed() {
    member_kill_restart("kill-mixed", &MIXED);
}

#[test]
fn member_kill_restart_with_librdkafka() {
    member_kill_restart("kill-rdk", &WITH_LIBRDKAFKA);
}

// ---- clean bounces -------------------------------------------------------------------------

/// Under a producer at 300/s, each member is stopped with SIGTERM and started again, one at a
/// time, each consuming again before the next; then all are stopped together and started again.
/// Nothing is lost, nothing accepted twice, and our members answer for every record they
/// reported before they exit.
fn clean_bounce(name: &str, imps: &[Impl]) {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, 3, imps);
    run(&mut s, |s| {
        s.start_producer(None, 300);
        s.start_all();
        s.await_all_members();
        s.await_consumed(300);
        for i in 0..s.members.len() {
            s.stop(i, true);
            s.start(i);
            s.await_all_members();
            s.await_consumed_by(i);
        }
        s.stop_all();
        s.start_all();
        s.await_all_members();
        for i in 0..s.members.len() {
            s.await_consumed_by(i);
        }
        s.drain();
        s.stop_all();
        s.verdict().assert_sound(name);
    });
}

#[test]
fn clean_bounce_ours() {
    clean_bounce("bounce-ours", &OURS);
}

#[test]
fn clean_bounce_java() {
    clean_bounce("bounce-java", &JAVA);
}

#[test]
fn clean_bounce_mixed() {
    clean_bounce("bounce-mixed", &MIXED);
}
