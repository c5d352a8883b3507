//! Workloads: the TOML specs users pick with `--workload`, and the seeded generator of ops.

pub mod budget;
pub mod expect;
pub mod fits;
mod generator;
pub mod mix;
pub mod nemesis;
pub mod net;
pub mod phases;
pub mod seed;
mod spec;
pub mod system;

pub use budget::Budget;
pub use expect::Expect;
pub use generator::{Generator, Planned};
pub use spec::{list, load, RetryPolicy, Workload, WorkloadError};
