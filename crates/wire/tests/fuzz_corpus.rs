//! Replays the committed fuzz corpus (`crates/wire/fuzz/corpus/<target>/*`) through the same
//! decoders the cargo-fuzz targets drive, on stable Rust and in every test run: an input that once
//! found a bug stays a regression test even where no nightly toolchain is installed.

#[path = "../fuzz/decoders.rs"]
mod decoders;

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("corpus entry").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        run(&data);
        count += 1;
    }
    count
}

#[test]
fn corpus_replays_without_panics() {
    for (target, run) in [
        ("response_frame", decoders::response_frame as fn(&[u8])),
        ("record_batch", decoders::record_batch),
        ("subscription", decoders::subscription),
        ("assignment", decoders::assignment),
    ] {
        assert!(replay(target, run) > 0, "the {target} corpus is empty");
    }
}
