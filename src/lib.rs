//! The `checker` program: bundled counter nodes, cluster control, the workload driver and
//! the report. The checkers themselves live in the `checkers` crate.

pub mod analysis;
pub mod api;
pub mod browse;
pub mod cli;
pub mod cluster;
pub mod driver;
pub mod node;
pub mod offline;
pub mod oracle_dumps;
pub mod report;
pub mod run;
pub mod run_folder;
pub mod soak;
pub mod workload;
