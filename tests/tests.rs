//! Integration tests that start real processes, compiled as one binary.

mod architecture;
mod check_command;
mod deletes_command;
mod lin_command;
mod nemesis;
mod node_api;
mod process;
mod run_command;
mod scenarios;
mod semantics_doc;
