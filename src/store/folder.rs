//! The run folder of docs/run-folder.md: its file names, where a run's files go, and the
//! `latest` links to it.

use std::io;
use std::path::{Path, PathBuf};

/// Every operation, one JSON object per line.
pub const HISTORY: &str = "history.jsonl";
/// Every checker's verdict and figures.
pub const RESULTS: &str = "results.json";
/// The effective configuration, the seed, the versions and the nodes.
pub const RECORD: &str = "run.json";
/// The run's report page.
pub const REPORT: &str = "report.html";
/// The page that explains why a history is not linearizable.
pub const LIN_PAGE: &str = "linearizability.html";
/// The folder of charts.
pub const PLOTS: &str = "plots";
/// The folder of node logs, data and oracle dumps.
pub const NODES: &str = "nodes";
/// The index of the runs in a folder of runs.
pub const INDEX: &str = "index.html";

/// Every run folder under `root` (`<workload>/<stamp>/` holding a history), in path
/// order; the `latest` links are not runs.
pub fn run_folders(root: &Path) -> Vec<PathBuf> {
    let subdirs = |dir: &Path| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        dirs
    };
    (subdirs(root).iter())
        .flat_map(|workload| subdirs(workload))
        .filter(|run| is_run(run))
        .collect()
}

/// Whether `dir` is a run folder: it holds a history.
pub fn is_run(dir: &Path) -> bool {
    dir.join(HISTORY).is_file()
}

/// One run's folder, `results/<workload>/<YYYYMMDDTHHMMSS>/`.
pub struct RunFolder {
    /// The folder.
    pub dir: PathBuf,
}

impl RunFolder {
    /// Creates a new, empty folder for a run of `workload` under `results`; a run never
    /// writes into another run's folder, so a second run in the same second gets a suffix.
    pub fn create(results: &Path, workload: &str) -> io::Result<Self> {
        let parent = results.join(workload);
        std::fs::create_dir_all(&parent)?;
        let stamp = chrono::Local::now().format("%Y%m%dT%H%M%S").to_string();
        for attempt in 1.. {
            let name = match attempt {
                1 => stamp.clone(),
                n => format!("{stamp}-{n}"),
            };
            let dir = parent.join(name);
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    std::fs::create_dir_all(dir.join(NODES))?;
                    std::fs::create_dir_all(dir.join(PLOTS))?;
                    return Ok(RunFolder { dir });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        unreachable!("the loop only ends by returning")
    }

    /// An existing run folder.
    pub fn open(dir: &Path) -> Self {
        RunFolder {
            dir: dir.to_path_buf(),
        }
    }

    /// `history.jsonl`.
    pub fn history(&self) -> PathBuf {
        self.dir.join(HISTORY)
    }

    /// `results.json`.
    pub fn results(&self) -> PathBuf {
        self.dir.join(RESULTS)
    }

    /// `run.json`.
    pub fn record(&self) -> PathBuf {
        self.dir.join(RECORD)
    }

    /// `report.html`.
    pub fn report(&self) -> PathBuf {
        self.dir.join(REPORT)
    }

    /// `linearizability.html`.
    pub fn lin_page(&self) -> PathBuf {
        self.dir.join(LIN_PAGE)
    }

    /// `nodes/`, where node logs, data and oracle dumps go.
    pub fn nodes(&self) -> PathBuf {
        self.dir.join(NODES)
    }

    /// `plots/`.
    pub fn plots(&self) -> PathBuf {
        self.dir.join(PLOTS)
    }

    /// Points `results/latest` and `results/<workload>/latest` at this run.
    pub fn link_latest(&self, results: &Path) -> io::Result<()> {
        let workload_dir = self.dir.parent().unwrap_or(results);
        let name = self.dir.file_name().unwrap_or_default();
        let workload = workload_dir.file_name().unwrap_or_default();
        replace_symlink(Path::new(name), &workload_dir.join("latest"))?;
        replace_symlink(&Path::new(workload).join(name), &results.join("latest"))
    }
}

/// Makes `link` point at `target` (relative to the link), replacing it atomically.
fn replace_symlink(target: &Path, link: &Path) -> io::Result<()> {
    let temp = link.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    std::os::unix::fs::symlink(target, &temp)?;
    std::fs::rename(&temp, link)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_in_one_second_get_two_folders_and_latest_follows() {
        let results = tempfile::tempdir().expect("temp dir");
        let first = RunFolder::create(results.path(), "w").expect("first");
        let second = RunFolder::create(results.path(), "w").expect("second");
        assert_ne!(first.dir, second.dir);
        first.link_latest(results.path()).expect("link");
        second.link_latest(results.path()).expect("relink");
        let latest = std::fs::canonicalize(results.path().join("latest")).expect("resolves");
        assert_eq!(latest, std::fs::canonicalize(&second.dir).expect("exists"));
        let w_latest = std::fs::canonicalize(results.path().join("w/latest")).expect("resolves");
        assert_eq!(w_latest, latest);
    }
}
