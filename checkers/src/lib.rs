//! History in, verdicts out: the history model, history readers and writers, and the
//! checkers that judge counter histories. No async runtime, no HTTP, no plotting.

pub mod builder;
pub mod convergence;
pub mod counter;
pub mod findings;
pub mod history;
pub mod ideal;
pub mod linear;
pub mod op;
pub mod oracle;
pub mod results;
pub mod resurrection;
pub mod stats;
pub mod thinned;
pub mod tombstones;
pub mod unknown_adds;
pub mod validity;

pub use findings::Finding;
pub use op::{Op, OpType, Process, F};
pub use results::{CheckOptions, Results};
pub use validity::Validity;
