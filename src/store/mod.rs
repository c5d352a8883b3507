//! The run folder, as Jepsen's store: every file name of a run in one place, the folder's
//! creation and `latest` links, and the documents written there and read back (run.json,
//! results.json, the nodes' oracle dumps). docs/run-folder.md describes it for users.

pub mod folder;
pub mod json;
pub mod oracle;
pub mod record;

pub use folder::{run_folders, RunFolder};
pub use json::write_json;
pub use record::{NodeRecord, RunRecord, SystemRecord};
