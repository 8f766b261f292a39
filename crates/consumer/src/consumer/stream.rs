//! Records as a pull-based stream, for applications that prefer a loop to a handler: each record
//! comes as a [`Delivery`] from a [`RecordStream`] (a [`futures_core::Stream`], with an inherent
//! [`next`](RecordStream::next) that needs no import). Behind it is an ordinary engine
//! [`Handler`] that sends the delivery and waits for its end, so ordering and the bound on records
//! out at once are the engine's (`mooring.ordering`; `mooring.concurrency` deliveries at most).
//!
//! The contract (spelled out in the docs of [`Delivery`] and [`RecordStream`], which users see):
//! `ack` is processed, `fail` is a failure for the policy, and a delivery dropped without either
//! is **not processed** — the handler reports [`NotProcessed::Abandoned`], an outcome of its own
//! that the failure policy never sees (a failure under `skip` would commit past it); the engine
//! keeps the offset abandoned, so no commit passes it and the record comes again when the
//! partition is next fetched from its committed offset. Dropping the stream requests shutdown;
//! the deliveries queued in it are dropped with it (abandoned), and records the engine starts
//! after that are never handed out ([`NotProcessed::NotHandedOut`]: as if not started). A panic
//! in the application's loop drops the stream and its deliveries: the same rules.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::{mpsc, oneshot};

use crate::processing::{ConsumerRecord, Handler, NotProcessed};
use crate::shutdown::ShutdownHandle;

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// One record handed out by [`Consumer::stream`](super::Consumer::stream). A delivery ends one
/// of three ways:
///
/// - [`ack`](Self::ack): processed. It is committable once the records before it are.
/// - [`fail`](Self::fail): failed. The failure policy (`mooring.failure.policy`) decides: under
///   `stop` nothing past it is committed and `run` ends with the error.
/// - dropped without either (a `?` or a panic in the loop, a forgotten delivery): **not
///   processed**. It is neither a success nor a failure, so the failure policy never sees it (a
///   failure under `skip` would commit past it). No commit of its partition ever passes its
///   offset, and it is delivered again when the partition is next fetched from its committed
///   offset: after a restart, or when the partition moves to another member (or away and back).
///
/// A dropped delivery holds nothing up meanwhile: its concurrency slot is free, a drain, revoke or
/// shutdown does not wait for it, and later records of its partition are still handed out and
/// acknowledged (committed only once the dropped one is processed, so a restart hands them out
/// again too). The partition goes on until its buffer (`mooring.buffer.max.records` records not
/// yet committable) is full, then backpressure pauses its fetching. Each dropped delivery is
/// reported once, as [`ProcessingEvent::RecordAbandoned`] and a warning naming the partition and
/// offset: that partition's commits have stopped.
///
/// [`ProcessingEvent::RecordAbandoned`]: crate::processing::ProcessingEvent::RecordAbandoned
#[must_use = "a delivery dropped without ack() or fail() is not processed: its partition's commits stop at it"]
pub struct Delivery {
    record: ConsumerRecord,
    /// Dropped unsent: the handler waiting on it learns the record was given up.
    done: Option<oneshot::Sender<Result<(), BoxError>>>,
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery")
            .field("record", &self.record)
            .finish_non_exhaustive()
    }
}

impl Delivery {
    /// The record.
    pub fn record(&self) -> &ConsumerRecord {
        &self.record
    }

    /// Marks the record processed: committable once the records before it are.
    pub fn ack(mut self) {
        self.finish(Ok(()));
    }

    /// Marks the record failed: the failure policy (`mooring.failure.policy`) decides what
    /// follows; under `stop` nothing past it is committed and `run` ends with the error.
    pub fn fail(mut self, error: impl Into<BoxError>) {
        self.finish(Err(error.into()));
    }

    fn finish(&mut self, result: Result<(), BoxError>) {
        if let Some(done) = self.done.take() {
            let _ = done.send(result);
        }
    }
}

/// The receiving end of [`Consumer::stream`](super::Consumer::stream): a
/// [`futures_core::Stream`] of [`Delivery`]s, and [`next`](Self::next) for a plain loop (no
/// import needed). See [`Delivery`] for when a record counts as processed.
///
/// Dropping the stream stops the consumer, as [`ShutdownHandle::shutdown`] does: every delivery
/// still queued in it, and every one the loop held and dropped with it, counts as not processed;
/// `run` drains, commits exactly what was acknowledged (up to the first record that was not),
/// closes the group member and returns `Ok(())`. So a loop that gives up with `?`, or panics,
/// loses nothing: a restart in the same group gets every record it did not acknowledge.
///
/// ```no_run
/// # async fn demo(consumer: mooring_consumer::Consumer) -> Result<(), Box<dyn std::error::Error>> {
/// let (mut records, run) = consumer.stream();
/// let running = tokio::spawn(run);
/// while let Some(delivery) = records.next().await {
///     let value = delivery.record().value().cloned().unwrap_or_default();
///     // An error here drops the stream and this delivery: the consumer stops, and the record
///     // is delivered again after a restart.
///     let text = std::str::from_utf8(&value)?;
///     println!("{}: {text}", delivery.record().offset());
///     delivery.ack();
/// }
/// running.await??;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RecordStream {
    rx: mpsc::Receiver<Delivery>,
    shutdown: ShutdownHandle,
}

impl RecordStream {
    /// The next record; `None` once the consumer has stopped.
    pub async fn next(&mut self) -> Option<Delivery> {
        self.rx.recv().await
    }
}

impl futures_core::Stream for RecordStream {
    type Item = Delivery;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Delivery>> {
        self.get_mut().rx.poll_recv(cx)
    }
}

impl Drop for RecordStream {
    fn drop(&mut self) {
        // Nothing more is handed out; what is queued is dropped with the receiver (not processed).
        self.rx.close();
        if !self.shutdown.is_shutdown() {
            tracing::info!("the record stream was dropped; shutting the consumer down");
            self.shutdown.shutdown();
        }
    }
}

/// The handler behind a stream: hands each record out and waits for the delivery's end.
pub(crate) struct StreamHandler {
    tx: mpsc::Sender<Delivery>,
}

pub(crate) fn channel(capacity: usize, shutdown: ShutdownHandle) -> (StreamHandler, RecordStream) {
    let (tx, rx) = mpsc::channel(capacity.max(1));
    (StreamHandler { tx }, RecordStream { rx, shutdown })
}

impl Handler for StreamHandler {
    type Error = BoxError;

    async fn handle(&self, record: ConsumerRecord) -> Result<(), BoxError> {
        let (done, finished) = oneshot::channel();
        let delivery = Delivery {
            record,
            done: Some(done),
        };
        if self.tx.send(delivery).await.is_err() {
            return Err(NotProcessed::NotHandedOut.into());
        }
        match finished.await {
            Ok(result) => result,
            // The delivery was dropped without ack or fail, queued or held.
            Err(_) => Err(NotProcessed::Abandoned.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use std::collections::BTreeSet;
    use std::time::Duration;

    use mooring_wire::records::Record;

    use super::*;
    use crate::processing::{
        FailurePolicy, ProcessingConfig, ProcessingEngine, ProcessingEvent, ProcessingEvents,
        ProcessingOrder,
    };
    use crate::{Consumer, ConsumerConfig, TopicPartition};

    fn shutdown_handle() -> ShutdownHandle {
        let config = ConsumerConfig::from_properties([("bootstrap.servers", "127.0.0.1:9")]);
        Consumer::new(config.unwrap()).unwrap().shutdown_handle()
    }

    fn engine(
        config: ProcessingConfig,
    ) -> (
        ProcessingEngine<StreamHandler>,
        ProcessingEvents,
        RecordStream,
        ShutdownHandle,
    ) {
        let shutdown = shutdown_handle();
        let (handler, records) = channel(config.concurrency, shutdown.clone());
        let (engine, events) = ProcessingEngine::new(config, handler).unwrap();
        (engine, events, records, shutdown)
    }

    fn records(offsets: std::ops::Range<i64>) -> Vec<Record> {
        offsets.map(|o| Record::new(o, 0, None, None)).collect()
    }

    async fn next(records: &mut RecordStream) -> Delivery {
        tokio::time::timeout(Duration::from_secs(5), records.next())
            .await
            .expect("a delivery within 5 s")
            .expect("the stream is open")
    }

    fn drain_events(events: &mut ProcessingEvents) -> Vec<ProcessingEvent> {
        std::iter::from_fn(|| events.try_recv().ok()).collect()
    }

    fn abandoned(events: &[ProcessingEvent]) -> Vec<i64> {
        events
            .iter()
            .filter_map(|e| match e {
                ProcessingEvent::RecordAbandoned { offset, .. } => Some(*offset),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn a_dropped_delivery_is_neither_done_nor_failed_and_holds_the_commit() {
        // Policy `skip` would commit past a failure: a dropped delivery must not be one.
        let config = ProcessingConfig {
            failure_policy: FailurePolicy::skip(),
            ..ProcessingConfig::default()
        };
        let (engine, mut events, mut stream, shutdown) = engine(config);
        let tp = TopicPartition::new("t", 0);
        engine.add_partitions([tp.clone()]);
        engine.submit(&tp, records(10..15)).unwrap();
        let first = next(&mut stream).await;
        assert_eq!(first.record().offset(), 10);
        drop(first);
        // Ordering per partition: the next records still come, and finish.
        for offset in 11..15 {
            let delivery = next(&mut stream).await;
            assert_eq!(delivery.record().offset(), offset);
            delivery.ack();
        }
        assert!(
            engine.drained(Duration::from_secs(5)).await,
            "nothing waits on it"
        );
        assert_eq!(engine.committable_offset(&tp), Some(10));
        let m = engine.metrics();
        assert_eq!(
            (
                m.abandoned_total,
                m.completed_total,
                m.failed_total,
                m.skipped_total
            ),
            (1, 4, 0, 0)
        );
        assert_eq!(m.in_flight, 0, "its concurrency slot is free");
        // Records after it still go out and finish; the commit stays.
        engine.submit(&tp, records(15..17)).unwrap();
        for _ in 15..17 {
            next(&mut stream).await.ack();
        }
        assert!(engine.drained(Duration::from_secs(5)).await);
        assert_eq!(engine.committable_offset(&tp), Some(10));
        let events = drain_events(&mut events);
        assert_eq!(abandoned(&events), [10]);
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, ProcessingEvent::HandlerFailed { .. })),
            "{events:?}"
        );
        // A shutdown (or revoke) does not wait for it and commits up to it.
        let report = tokio::time::timeout(
            Duration::from_secs(1),
            engine.shutdown(Duration::from_secs(30)),
        )
        .await
        .expect("shutdown does not wait for the abandoned record");
        assert_eq!(report.committable.get(&tp), Some(&10));
        assert!(report.timed_out.is_empty());
        assert!(!shutdown.is_shutdown(), "the stream is still there");
    }

    #[tokio::test]
    async fn dropping_the_stream_shuts_down_and_abandons_what_it_queued() {
        let config = ProcessingConfig {
            concurrency: 4,
            ordering: ProcessingOrder::None,
            ..ProcessingConfig::default()
        };
        let (engine, mut events, mut stream, shutdown) = engine(config);
        let tp = TopicPartition::new("t", 0);
        engine.add_partitions([tp.clone()]);
        engine.submit(&tp, records(0..8)).unwrap();
        // Four deliveries out at once (in any order): one acknowledged, one held, two queued.
        let acked = next(&mut stream).await;
        let acked_offset = acked.record().offset();
        acked.ack();
        let held = next(&mut stream).await;
        let held_offset = held.record().offset();
        drop(stream);
        assert!(
            shutdown.is_shutdown(),
            "dropping the stream stops the consumer"
        );
        drop(held);
        let report = tokio::time::timeout(
            Duration::from_secs(1),
            engine.shutdown(Duration::from_secs(30)),
        )
        .await
        .expect("nothing to wait for");
        let lowest_unacked = (0..8).find(|o| *o != acked_offset).unwrap();
        assert_eq!(report.committable.get(&tp), Some(&lowest_unacked));
        assert!(report.timed_out.is_empty());
        assert!(engine.failure().is_none(), "no failure");
        let events = drain_events(&mut events);
        let abandoned: BTreeSet<i64> = abandoned(&events).into_iter().collect();
        assert!(abandoned.contains(&held_offset), "{events:?}");
        assert!(!abandoned.contains(&acked_offset), "{events:?}");
        // The queued deliveries were dropped with the stream; records started after it were not
        // handed out, and are not reported as abandoned.
        assert!(abandoned.len() <= 3, "{events:?}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, ProcessingEvent::HandlerFailed { .. })),
            "{events:?}"
        );
    }

    #[tokio::test]
    async fn a_panic_in_the_loop_drops_the_stream_and_its_delivery() {
        let (engine, mut events, stream, shutdown) = engine(ProcessingConfig::default());
        let tp = TopicPartition::new("t", 0);
        engine.add_partitions([tp.clone()]);
        engine.submit(&tp, records(0..3)).unwrap();
        let app = tokio::spawn(async move {
            let mut stream = stream;
            let _held = next(&mut stream).await;
            panic!("the application's loop panics while holding a delivery");
        });
        assert!(app.await.unwrap_err().is_panic());
        assert!(
            shutdown.is_shutdown(),
            "dropping the stream stops the consumer"
        );
        let report = tokio::time::timeout(
            Duration::from_secs(1),
            engine.shutdown(Duration::from_secs(30)),
        )
        .await
        .expect("nothing to wait for");
        assert_eq!(report.committable.get(&tp), Some(&0));
        assert!(
            engine.failure().is_none(),
            "a panic in the loop is no handler failure"
        );
        // Offset 1 started after the stream was gone: never handed out, not reported.
        assert_eq!(abandoned(&drain_events(&mut events)), [0]);
    }

    #[tokio::test]
    async fn fail_is_a_failure_for_the_policy() {
        let (engine, _events, mut stream, _shutdown) = engine(ProcessingConfig::default());
        let tp = TopicPartition::new("t", 0);
        engine.add_partitions([tp.clone()]);
        engine.submit(&tp, records(0..2)).unwrap();
        next(&mut stream).await.fail("bad record");
        assert!(engine.drained(Duration::from_secs(5)).await);
        let failure = engine.failure().expect("policy stop: a failure");
        assert_eq!(
            (failure.offset, engine.committable_offset(&tp)),
            (0, Some(0))
        );
    }

    #[tokio::test]
    async fn the_stream_is_a_futures_stream() {
        let (engine, _events, mut stream, _shutdown) = engine(ProcessingConfig::default());
        let tp = TopicPartition::new("t", 0);
        engine.add_partitions([tp.clone()]);
        engine.submit(&tp, records(0..1)).unwrap();
        let polled =
            std::future::poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut stream), cx));
        let delivery = tokio::time::timeout(Duration::from_secs(5), polled)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(delivery.record().offset(), 0);
        delivery.ack();
        let report = engine.shutdown(Duration::from_secs(5)).await;
        assert_eq!(report.committable.get(&tp), Some(&1));
        drop(engine);
        assert!(stream.next().await.is_none(), "ends with the engine");
    }
}
