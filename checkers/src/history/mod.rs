//! Reading and writing histories, and the errors that name where a history is wrong.

mod edn;
mod edn_op;
mod edn_writer;
mod format;
mod jepsen_log;
mod jsonl;
mod wellformed;

pub use edn_writer::write_edn;
pub use format::{detect, detect_file, parse_history, read_history, Format, UnknownFormat};
pub use jsonl::{read_jsonl, JsonlReader, JsonlWriter};
pub use wellformed::{Admit, Pairing, ReadOptions, MAX_LINE_BYTES};

use std::path::PathBuf;
use thiserror::Error;

/// Why a history could not be read or written.
#[derive(Debug, Error)]
pub enum HistoryError {
    /// The file could not be opened or read.
    #[error("{}", path.display())]
    Io {
        /// The history file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The history as a whole cannot be checked, such as one with no operations.
    #[error("{}: {message}", path.display())]
    Unusable {
        /// The history file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A line is not a valid operation.
    #[error("{}:{line}: {message}", path.display())]
    Malformed {
        /// The history file.
        path: PathBuf,
        /// The 1-based line number.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
}
