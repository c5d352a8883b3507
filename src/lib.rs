//! The `checker` program: bundled counter nodes, cluster control, the workload driver, the
//! check, the report and the soak. The checkers themselves live in the `checkers` crate.
//!
//! The data flows one way: workload → driver ⇄ nodes (through `api`) → history (`store`) →
//! `check` → results.json → `report`; `runner` and `soak` put the steps together and `cli`
//! is the command line.

#![warn(missing_docs)]

pub mod api;
pub mod check;
pub mod cli;
pub mod cluster;
pub mod driver;
pub mod error;
pub mod hunt;
mod node;
mod report;
pub mod runner;
pub mod shutdown;
pub mod sim;
pub mod soak;
pub mod store;
pub mod systems;
pub mod workload;
