//! What every fuzz target checks of a reader: whatever the bytes, `parse_history` returns
//! ops indexed in file order or an error naming a line of the input, and never panics.

use checkers::history::{parse_history, Format, HistoryError, ReadOptions};
use std::path::Path;

/// Reads `data` as `format` and panics (a finding) if the result breaks the readers' promise.
pub fn check(data: &[u8], format: Format) {
    let lines = 1 + data.iter().filter(|&&b| b == b'\n').count() as u64;
    match parse_history(data, Path::new("fuzz"), Some(format), ReadOptions::default()) {
        Ok((ops, _)) => {
            let in_order = ops.iter().enumerate().all(|(i, op)| op.index == i as u64);
            assert!(in_order, "ops out of file order");
        }
        Err(HistoryError::Malformed { line, .. }) => {
            assert!((1..=lines).contains(&line), "line {line} of {lines}");
        }
        Err(e) => panic!("reading from memory is not an I/O error: {e}"),
    }
}
