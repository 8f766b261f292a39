#![no_main]

#[path = "../decoders.rs"]
mod decoders;

libfuzzer_sys::fuzz_target!(|data: &[u8]| decoders::assignment(data));
