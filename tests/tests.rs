//! Integration tests that start real processes, compiled as one binary.

mod architecture;
mod check_command;
mod deletes_command;
mod exit_codes;
mod full_disk;
mod lin_command;
mod nemesis;
mod netns;
mod node_api;
mod node_limits;
mod process;
mod replay;
mod run_command;
mod scenarios;
mod semantics_doc;
mod sim;
mod soak_workflow;
mod systems;
mod target_runs;
mod workloads;
