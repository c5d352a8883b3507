//! Bad input: the one error kind that makes the program exit 254 (bad arguments or
//! unreadable input); every other error exits 255.

use crate::workload::WorkloadError;
use checkers::history::HistoryError;

/// Bad arguments or unreadable input.
#[derive(Debug, thiserror::Error)]
pub enum BadInput {
    /// A workload that does not exist or does not parse.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A history that cannot be read.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// Anything else the user gave that cannot be used.
    #[error("{0}")]
    Usage(String),
}
