//! `consume-confluent-rust BOOTSTRAP TOPIC N GROUP [KEY=VALUE ...]`: consumes N records with
//! Confluent's Rust client (crates.io `confluent-kafka`, a translation of Kafka's Java consumer)
//! and prints `consume-bench`'s JSON line.
//!
//! Driven as its example consumer is: a `KafkaConsumer` from a property map, subscribed to the
//! topic, `poll(1 s)` in a loop on tokio's multi-threaded runtime, `close()` at the end. Its
//! defaults except: `group.protocol=consumer` (the client has only KIP-848 groups), a fresh
//! `group.id`, `auto.offset.reset=earliest`. Values come through `BytesDeserializer`, a slice of
//! the fetched buffer (no copy); only their length is counted.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use confluent_kafka::common::serialization::BytesDeserializer;
use confluent_kafka::consumer::{Consumer, ConsumerConfig, GroupProtocol, KafkaConsumer};
use mooring_rust_peers::{Args, Tally};

const CLIENT: &str = "confluent-rust";

#[tokio::main]
async fn main() -> ExitCode {
    mooring_rust_peers::main(CLIENT, run).await
}

async fn run(args: Args) -> Result<String, Box<dyn std::error::Error>> {
    let base = [
        (
            ConsumerConfig::BOOTSTRAP_SERVERS_CONFIG,
            args.bootstrap.clone(),
        ),
        (ConsumerConfig::GROUP_ID_CONFIG, args.group.clone()),
        (
            ConsumerConfig::GROUP_PROTOCOL_CONFIG,
            GroupProtocol::Consumer.to_string(),
        ),
        (ConsumerConfig::AUTO_OFFSET_RESET_CONFIG, "earliest".into()),
        (
            ConsumerConfig::CLIENT_ID_CONFIG,
            format!("consume-perf-{CLIENT}"),
        ),
    ];
    let props: HashMap<String, String> = args
        .properties(base.map(|(k, v)| (k.to_owned(), v)).into())
        .into_iter()
        .collect();
    let config = ConsumerConfig::new(&props)?;
    let mut consumer: KafkaConsumer<Bytes, Bytes> =
        KafkaConsumer::new(config, BytesDeserializer::new(), BytesDeserializer::new())?;
    let mut tally = Tally::start(args.records);
    let consumed = match consumer
        .subscribe_with_topics(vec![args.topic.clone()])
        .await
    {
        Ok(()) => consume(&mut consumer, &mut tally).await,
        Err(e) => Err(e.into()),
    };
    let closed = consumer.close().await;
    consumed?;
    closed?;
    Ok(tally.report(CLIENT)?)
}

async fn consume(
    consumer: &mut KafkaConsumer<Bytes, Bytes>,
    tally: &mut Tally,
) -> Result<(), Box<dyn std::error::Error>> {
    while !tally.done() {
        if tally.timed_out() {
            return Err(tally.short().into());
        }
        let records = match consumer.poll(Duration::from_secs(1)).await {
            Ok(records) => records,
            Err(e) if e.is_retriable_error() => continue,
            Err(e) => return Err(e.into()),
        };
        for record in &records {
            tally.record(record.value().map_or(0, Bytes::len));
        }
    }
    Ok(())
}
