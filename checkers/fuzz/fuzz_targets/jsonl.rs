//! Fuzzes the jsonl reader through `parse_history`.
#![no_main]

use checkers::history::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checkers_fuzz::check(data, Format::Jsonl));
