//! What a count read off the wire may make a decoder reserve: no more than the bytes left could
//! fill. Replays the corpus case whose Metadata v0 response claims 16 Mi topics in 16 MiB (a
//! count the bytes left allow, since an empty v0 topic takes 8 bytes): pre-allocating the count
//! at the size a topic has in memory would reserve gigabytes before the input runs out.
//!
//! The heap is measured with dhat's allocator, in a test binary of its own so the rest of the
//! suite runs on the system allocator.

#[path = "../fuzz/decoders.rs"]
mod decoders;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// A decoder may hold several times the bytes it decoded (a struct in memory is larger than its
/// shortest encoding), but never in proportion to a count it was merely told.
const MAX_HEAP_PER_INPUT_BYTE: usize = 32;

#[test]
fn a_claimed_count_reserves_no_more_than_the_input_can_fill() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus/response_frame/metadata-v0-topic-count-asks-for-gigabytes");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let before = dhat::HeapStats::get();
    decoders::response_frame(&data);
    let after = dhat::HeapStats::get();
    let peak = after.max_bytes - before.curr_bytes;
    assert!(
        peak <= MAX_HEAP_PER_INPUT_BYTE * data.len(),
        "decoding {} bytes reached {peak} bytes of heap ({}x)",
        data.len(),
        peak / data.len()
    );
}
