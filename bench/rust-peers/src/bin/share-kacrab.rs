//! `share-kacrab BOOTSTRAP TOPIC N GROUP [KEY=VALUE ...]`: consumes N records with kacrab's share
//! consumer (KIP-932, its `share-consumer` feature) in a share group whose
//! `share.auto.offset.reset` is already `earliest`, and prints `consume-bench`'s JSON line, as
//! Mooring's `share-bench` does.
//!
//! Driven as its docs drive it: `ShareConsumer::from_map`, `subscribe`, `poll(1 s)` in a loop on
//! tokio's current-thread runtime, `close()` at the end; its defaults (implicit acknowledgement:
//! each poll accepts what the previous one returned) except a fresh `group.id`. Only the value's
//! length is counted (`value: Option<Bytes>`), no deserializer runs.
//!
//! Two keys are the bench's own, not kacrab's:
//! - `bench.handler.delay.ms=D`: each record's handler sleeps D ms (tokio's timer) before the
//!   record is counted; 0 or absent: no handler but the count.
//! - `bench.handler.concurrency=C` (default 16, Mooring's `mooring.concurrency` default): with a
//!   delay, up to C handlers run at once over each poll's records. All of a poll's records are
//!   done before the next poll, whose implicit acknowledgement accepts them, as in any poll-loop
//!   application: kacrab has no handler API that would run them across polls.

use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use kacrab::consumer::{ShareConsumer, ShareRecords};
use mooring_rust_peers::{Args, Tally};
use tokio::task::JoinSet;

const CLIENT: &str = "kacrab";

/// The handler every record goes through.
#[derive(Debug, Clone, Copy)]
struct Handler {
    delay: Option<Duration>,
    concurrency: usize,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    mooring_rust_peers::main(CLIENT, run).await
}

fn handler(args: &mut Args) -> Result<Handler, String> {
    let delay_ms = match args.take("bench.handler.delay.ms") {
        Some(v) => v
            .parse::<u64>()
            .map_err(|_| format!("bench.handler.delay.ms={v}: not a number of milliseconds"))?,
        None => 0,
    };
    let concurrency = match args.take("bench.handler.concurrency") {
        Some(v) => match v.parse::<usize>() {
            Ok(c) if c > 0 => c,
            _ => return Err(format!("bench.handler.concurrency={v}: not a positive integer")),
        },
        None => 16,
    };
    Ok(Handler {
        delay: (delay_ms > 0).then(|| Duration::from_millis(delay_ms)),
        concurrency,
    })
}

async fn run(mut args: Args) -> Result<String, Box<dyn std::error::Error>> {
    let handler = handler(&mut args)?;
    let base = [
        ("bootstrap.servers", args.bootstrap.clone()),
        ("group.id", args.group.clone()),
        ("client.id", format!("share-perf-{CLIENT}")),
    ];
    let props = args.properties(base.map(|(k, v)| (k.to_owned(), v)).into());
    let mut consumer = ShareConsumer::from_map(props).await?;
    let mut tally = Tally::start(args.records);
    let consumed = match consumer.subscribe([args.topic.clone()]) {
        Ok(()) => consume(&mut consumer, &mut tally, handler).await,
        Err(e) => Err(e.into()),
    };
    consumer.close().await;
    consumed?;
    Ok(tally.report(CLIENT)?)
}

async fn consume(
    consumer: &mut ShareConsumer,
    tally: &mut Tally,
    handler: Handler,
) -> Result<(), Box<dyn std::error::Error>> {
    while !tally.done() {
        if tally.timed_out() {
            return Err(tally.short().into());
        }
        let records = consumer.poll(Duration::from_secs(1)).await?;
        match handler.delay {
            None => {
                for share in &records {
                    tally.record(share.record.value.as_ref().map_or(0, Bytes::len));
                }
            }
            Some(delay) => handle(&records, delay, handler.concurrency, tally).await?,
        }
    }
    Ok(())
}

/// Runs the delayed handler on every record of one poll, `limit` at once, counting each as it
/// finishes.
async fn handle(
    records: &ShareRecords,
    delay: Duration,
    limit: usize,
    tally: &mut Tally,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut running = JoinSet::new();
    for share in records {
        if running.len() >= limit {
            if let Some(done) = running.join_next().await {
                tally.record(done?);
            }
        }
        let len = share.record.value.as_ref().map_or(0, Bytes::len);
        running.spawn(async move {
            tokio::time::sleep(delay).await;
            len
        });
    }
    while let Some(done) = running.join_next().await {
        tally.record(done?);
    }
    Ok(())
}
