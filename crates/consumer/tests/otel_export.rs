//! `otel::init` end to end: with `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_SERVICE_NAME` set, the
//! process span of a record handled by the processing engine reaches an OTLP/HTTP receiver (a
//! loopback HTTP server in this test) as a protobuf `POST /v1/traces` when the guard is dropped,
//! carrying the service name, the span name and the trace id of the record's `traceparent`.
//!
//! `init` is called inside a Tokio runtime as a service's `main` would, and the guard dropped
//! there too: the exporter's blocking HTTP client must cope with that.
//! Its own test binary: `init` installs the process-wide subscriber.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use mooring_consumer::otel::{init_with, OtelConfig};
use mooring_consumer::processing::{ConsumerRecord, ProcessingConfig, ProcessingEngine};
use mooring_consumer::TopicPartition;
use mooring_wire::records::{Header, Record};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

/// One HTTP request: request line, lower-case headers, body.
#[derive(Debug)]
struct Request {
    line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Serves HTTP/1.1 on a loopback port, answering 200 to every request and sending it on.
fn receiver() -> (String, mpsc::Receiver<Request>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut headers = Vec::new();
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h).unwrap();
                        let h = h.trim_end();
                        if h.is_empty() {
                            break;
                        }
                        let (k, v) = h.split_once(':').unwrap();
                        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
                    }
                    let len: usize = headers
                        .iter()
                        .find(|(k, _)| k == "content-length")
                        .map_or(0, |(_, v)| v.parse().unwrap());
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    stream
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n")
                        .unwrap();
                    let _ = tx.send(Request {
                        line: line.trim_end().to_owned(),
                        headers,
                        body,
                    });
                }
            });
        }
    });
    (format!("http://{addr}"), rx)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_exports_process_spans_over_otlp_http() {
    let (endpoint, requests) = receiver();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_SERVICE_NAME", "otel-export-test"),
    ];
    let config = OtelConfig::from_lookup(|k| {
        env.iter()
            .find(|(name, _)| *name == k)
            .map(|(_, v)| v.to_string())
    })
    .unwrap();
    assert_eq!(
        config.traces_endpoint.as_deref(),
        Some(format!("{endpoint}/v1/traces").as_str())
    );
    let guard = init_with(config).unwrap();
    assert!(guard.exporting());

    let (engine, _events) = ProcessingEngine::new(
        ProcessingConfig::default(),
        |_record: ConsumerRecord| async { Ok::<(), String>(()) },
    )
    .unwrap();
    let tp = TopicPartition::new("otel-export-topic", 3);
    engine.add_partitions([tp.clone()]);
    let mut record = Record::new(7, 0, Some("key-7".into()), Some("v".into()));
    record.headers.push(Header::new(
        "traceparent",
        format!("00-{TRACE}-00f067aa0ba902b7-01"),
    ));
    engine.submit(&tp, vec![record]).unwrap();
    assert!(engine.drained(Duration::from_secs(10)).await);
    let report = engine.shutdown(Duration::from_secs(5)).await;
    assert_eq!(report.committable.get(&tp), Some(&8));

    // Dropping the guard flushes the batch.
    drop(guard);
    let request = requests
        .recv_timeout(Duration::from_secs(20))
        .expect("an OTLP export request");
    assert_eq!(request.line, "POST /v1/traces HTTP/1.1");
    assert!(
        request
            .headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "application/x-protobuf"),
        "{:?}",
        request.headers
    );
    let body = &request.body;
    assert!(contains(body, b"otel-export-test"), "service.name");
    assert!(contains(body, b"process otel-export-topic"), "span name");
    assert!(contains(body, b"messaging.kafka.offset"), "attributes");
    assert!(contains(body, b"key-7"), "message key");
    let trace_id: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&TRACE[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    assert!(contains(body, &trace_id), "the traceparent's trace id");
}
