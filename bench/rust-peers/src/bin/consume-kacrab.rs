//! `consume-kacrab BOOTSTRAP TOPIC N GROUP [KEY=VALUE ...]`: consumes N records with kacrab (a
//! Kafka client in Rust built from the protocol up) and prints `consume-bench`'s JSON line.
//!
//! Driven as its README's consumer is: `Consumer::from_map`, `subscribe`, `poll(1 s)` in a loop on
//! tokio's current-thread runtime, `close()` at the end. Its defaults except a fresh `group.id`
//! and `auto.offset.reset=earliest`; the group protocol stays its default (classic, as Java's and
//! librdkafka's). Records are bytes-first (`value: Option<Bytes>`, a slice of the fetched
//! buffer): only the value's length is counted, no deserializer runs.

use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use kacrab::consumer::Consumer;
use mooring_rust_peers::{Args, Tally};

const CLIENT: &str = "kacrab";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    mooring_rust_peers::main(CLIENT, run).await
}

async fn run(args: Args) -> Result<String, Box<dyn std::error::Error>> {
    let base = [
        ("bootstrap.servers", args.bootstrap.clone()),
        ("group.id", args.group.clone()),
        ("auto.offset.reset", "earliest".into()),
        ("client.id", format!("consume-perf-{CLIENT}")),
    ];
    let props = args.properties(base.map(|(k, v)| (k.to_owned(), v)).into());
    let mut consumer = Consumer::from_map(props).await?;
    let mut tally = Tally::start(args.records);
    let consumed = match consumer.subscribe([args.topic.clone()]) {
        Ok(()) => consume(&mut consumer, &mut tally).await,
        Err(e) => Err(e.into()),
    };
    consumer.close().await;
    consumed?;
    Ok(tally.report(CLIENT)?)
}

async fn consume(
    consumer: &mut Consumer,
    tally: &mut Tally,
) -> Result<(), Box<dyn std::error::Error>> {
    while !tally.done() {
        if tally.timed_out() {
            return Err(tally.short().into());
        }
        let records = consumer.poll(Duration::from_secs(1)).await?;
        for record in &records {
            tally.record(record.value.as_ref().map_or(0, Bytes::len));
        }
    }
    Ok(())
}
