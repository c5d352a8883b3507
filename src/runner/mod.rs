//! A run end to end: start a cluster (or reach a target), drive the workload with the
//! nemesis, record the history, then check it and draw its report.

use crate::api::AdminClient;
use crate::check::{self, Target};
use crate::cluster::{node_ids, Network};
use crate::driver::{target, HttpClient, Processes, Recorder};
use crate::error::BadInput;
use crate::report::excerpt::Excerpt;
use crate::report::plots::Tally;
use crate::report::run_report::{self, Checked};
use crate::report::{index, summary};
use crate::store::{NodeRecord, RunFolder, RunRecord};
use crate::workload::nemesis::FaultKind;
use crate::workload::net::NetMode;
use crate::workload::system::System;
use crate::workload::Workload;
use anyhow::Context;
use checkers::{Results, Validity};
pub use load::Load;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod bundled;
mod load;
mod sim;
mod system;

/// What a run was asked to do, after flags were applied to the workload file.
pub struct RunPlan {
    /// The effective workload.
    pub workload: Workload,
    /// The seed; random when the user gave none.
    pub seed: u64,
    /// Where run folders go.
    pub results: PathBuf,
    /// Panic once the cluster is up (to test that no node outlives a crashed run).
    pub panic_after_start: bool,
    /// An already running service (`host:port` each) to drive instead of bundled nodes.
    pub targets: Vec<String>,
    /// With targets: the workload's keys are used as they are (not namespaced per run).
    pub keys_as_is: bool,
    /// The whole cluster in this process, on a simulated network and clock (`--sim`).
    pub sim: bool,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The combined verdict.
    pub verdict: Validity,
    /// Every checker's results, as results.json holds them.
    pub results: Results,
    /// The run folder.
    pub dir: PathBuf,
    /// Ctrl-C stopped the load early.
    pub interrupted: bool,
    /// It ran in simulation.
    pub sim: bool,
}

/// Runs the plan end to end, prints its summary, and points the results folder's latest
/// links and index at it.
pub async fn run(plan: RunPlan) -> anyhow::Result<RunOutcome> {
    let results_dir = plan.results.clone();
    let outcome = execute(plan).await?;
    print!("{}", summary::render(&outcome.results, Some(&outcome.dir)));
    let folder = RunFolder::open(&outcome.dir);
    folder
        .link_latest(&results_dir)
        .context("updating the latest links")?;
    index::write(&results_dir).context("writing the index of runs")?;
    Ok(outcome)
}

/// Runs the plan end to end into a run folder of its own, checked and reported, and
/// touches nothing else in the results folder (runs in parallel do not collide).
pub async fn execute(mut plan: RunPlan) -> anyhow::Result<RunOutcome> {
    if plan.workload.net == NetMode::Netns {
        // Before anything starts (`run`, `replay` and `soak` alike): say what is missing.
        if !plan.targets.is_empty() {
            let message = "--net netns puts the nodes this run starts in namespaces; a --target is someone else's service: drop one of them";
            return Err(BadInput::Usage(message.into()).into());
        }
        crate::cluster::netns::check_available().map_err(|e| BadInput::Usage(e.to_string()))?;
    }
    let system = plan.workload.system;
    if system != System::Bundled {
        if plan.sim || !plan.targets.is_empty() {
            let message = format!(
                "--system {system} starts {system} on this machine: drop --sim and --target"
            );
            return Err(BadInput::Usage(message).into());
        }
        // Once the flags are on (`--net` decides whether partitions can be played).
        let refused = crate::workload::fits::fits_its_system(&plan.workload);
        refused.map_err(|e| BadInput::Usage(format!("--system {system}: {e}")))?;
        crate::systems::check_installed(system).map_err(|e| BadInput::Usage(e.to_string()))?;
    }
    if plan.sim && (!plan.targets.is_empty() || plan.workload.net == NetMode::Netns) {
        let message = "--sim runs the bundled nodes in this process on a simulated network: drop --target and --net netns";
        return Err(BadInput::Usage(message.into()).into());
    }
    let reached = reach_targets(&mut plan).await?;
    let folder = RunFolder::create(&plan.results, &plan.workload.name).map_err(|e| {
        let message = format!("creating a run folder under {}", plan.results.display());
        // A path that cannot hold a folder is bad input; a failing disk is not.
        use std::io::ErrorKind::*;
        match e.kind() {
            NotFound | PermissionDenied | NotADirectory | AlreadyExists | ReadOnlyFilesystem => {
                anyhow::Error::from(BadInput::Usage(format!("{message}: {e}")))
            }
            _ => anyhow::Error::from(e).context(message),
        }
    })?;
    eprintln!(
        "run {} · workload {} · seed {} · {} nodes · {:.0}s",
        folder.dir.display(),
        plan.workload.name,
        plan.seed,
        plan.workload.nodes,
        plan.workload.time_limit
    );
    let mut record = RunRecord::new(plan.workload.clone(), plan.seed);
    record.sim = plan.sim;
    // Counters a target held before the run may sit among tombstones of earlier runs.
    record.cluster_started_empty = !plan.keys_as_is;
    if let Some(note) = reached.note {
        eprintln!("{note}");
        record.faults_note = Some(note);
    }
    record.write(&folder)?;

    let interrupted = Arc::new(AtomicBool::new(false));
    if plan.sim {
        let history = folder.history();
        let (w, seed) = (plan.workload.clone(), plan.seed);
        let nodes = sim::run(w, seed, folder.nodes(), history, interrupted.clone()).await?;
        record.nodes = nodes;
    } else if plan.targets.is_empty() {
        let network = match plan.workload.net {
            NetMode::Netns => {
                let made = Network::create(&node_ids(plan.workload.nodes));
                let network = Arc::new(made.context("making the run's network namespaces")?);
                let t = network.topology();
                eprintln!(
                    "network: {} namespaces on bridge {} ({}); partitions are nftables rules, slow links {}",
                    t.nodes.len(),
                    t.bridge,
                    t.subnet,
                    t.slow_links
                );
                record.network = Some(t.clone());
                record.write(&folder)?;
                Some(network)
            }
            NetMode::Loopback => None,
        };
        if system != System::Bundled {
            let seed = plan.seed;
            system::run(&folder, &mut record, seed, network, interrupted.clone()).await?;
        } else {
            let binary = std::env::current_exe().context("finding this program to start nodes")?;
            bundled::run(
                &plan,
                &folder,
                &mut record,
                binary,
                network,
                interrupted.clone(),
            )
            .await?;
        }
    } else {
        // Someone else's service: no process of ours to kill, no oracle.
        let addrs: Vec<(String, String)> = plan
            .targets
            .iter()
            .zip(reached.ids)
            .map(|(a, id)| (id, a.clone()))
            .collect();
        record.nodes = addrs
            .iter()
            .map(|(id, addr)| NodeRecord {
                id: id.clone(),
                addr: addr.clone(),
                pid: 0,
            })
            .collect();
        record.write(&folder)?;
        if !reached.baseline.is_empty() {
            eprintln!(
                "baseline: {} of the workload's counters already hold counts; the checkers start each from it",
                reached.baseline.len()
            );
        }
        let history = folder.history();
        let baseline = &reached.baseline;
        // Targets whose fault plane answered (`reach_targets` cleared the faults otherwise).
        let plane = (!plan.workload.nemesis.faults.is_empty()).then(|| {
            let admin = AdminClient::new(Duration::from_secs(5));
            Arc::new(Processes::targets(addrs.clone(), admin))
        });
        drive_load(&plan, &history, addrs, plane, baseline, interrupted.clone()).await?;
    }

    record.interrupted = interrupted.load(Ordering::Relaxed);
    record.finished = Some(chrono::Local::now().to_rfc3339());
    record.write(&folder)?;
    let results = check_and_report(&folder)?;
    Ok(RunOutcome {
        verdict: results.valid,
        results,
        dir: folder.dir.clone(),
        interrupted: record.interrupted,
        sim: plan.sim,
    })
}

/// What probing the targets found: their ids, and why faults were dropped, if they were.
struct Reached {
    /// Each target's id: the node's own where its fault plane answered (cuts and delays
    /// name peers by it), else `t1`, `t2`, ...
    ids: Vec<String>,
    /// Why the workload's faults were not all played.
    note: Option<String>,
    /// With `keys_as_is`: the counts the keys already held, from which the checkers start.
    baseline: Vec<(String, i64)>,
}

/// Probes every target before anything starts (a target that is down, or does not speak the
/// node API, is bad input) and, with `keys_as_is`, reads the counts the keys already hold
/// (from the first target: the targets are one cluster). Faults the targets cannot play are dropped from the plan, and the note says
/// which: with a fault plane on every target, all but kill and power loss play through it.
async fn reach_targets(plan: &mut RunPlan) -> Result<Reached, BadInput> {
    let mut planes = Vec::new();
    for addr in &plan.targets {
        let found = target::probe(addr)
            .await
            .map_err(|e| BadInput::Usage(e.to_string()))?;
        if let target::Found::FaultPlane(id) = found {
            planes.push(id);
        }
    }
    let mut baseline = Vec::new();
    if let Some(addr) = plan.targets.first().filter(|_| plan.keys_as_is) {
        let absent_is_zero = plan.workload.absent_is_zero;
        baseline = target::baseline(addr, &plan.workload.keys, absent_is_zero)
            .await
            .map_err(|e| BadInput::Usage(e.to_string()))?;
    }
    let every_plane = planes.len() == plan.targets.len();
    let ids = match every_plane {
        true => planes,
        false => (1..=plan.targets.len()).map(|i| format!("t{i}")).collect(),
    };
    let faults = &mut plan.workload.nemesis.faults;
    if plan.targets.is_empty() || faults.is_empty() {
        return Ok(Reached {
            ids,
            note: None,
            baseline,
        });
    }
    if !every_plane {
        faults.clear();
        let note = "no faults: the target has no fault plane (GET /admin/health does not answer as our node's does)";
        return Ok(Reached {
            ids,
            note: Some(note.to_string()),
            baseline,
        });
    }
    let before = faults.len();
    faults.retain(|f| !matches!(f, FaultKind::Kill | FaultKind::PowerLoss));
    let note = (faults.len() < before).then(|| {
        "kill and power loss need the processes and are not played against a target; the other faults play through its /admin fault plane".to_string()
    });
    Ok(Reached {
        ids,
        note,
        baseline,
    })
}

/// Drives the workload with a progress display while the nemesis runs its schedule; then
/// heals the cluster and reads every counter from every node. A `baseline` (counts the
/// counters held before the run) is recorded first. A stop signal (Ctrl-C,
/// SIGTERM, SIGHUP: `shutdown`) stops the load early.
async fn drive_load(
    plan: &RunPlan,
    history: &Path,
    addrs: Vec<(String, String)>,
    plane: Option<Arc<Processes>>,
    baseline: &[(String, i64)],
    interrupted: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let w = &plan.workload;
    let recorder = Arc::new(Recorder::create(history).map_err(BadInput::from)?);
    target::record_baseline(&recorder, baseline).context("recording the baseline")?;
    let ids: Vec<String> = addrs.iter().map(|(id, _)| id.clone()).collect();
    let timeout = Duration::from_millis(w.client_timeout_ms);
    let client = Arc::new(HttpClient::new(addrs, timeout));
    let load = Load {
        workload: w,
        seed: plan.seed,
        ids,
        recorder,
        progress: true,
    };
    load.drive(client, plane, interrupted).await
}

/// Checks a run folder's history (rewriting results.json) and tallies it for the charts
/// in the same pass, then draws its charts and pages; the history is read again, without
/// being held, only for the ops the pages show around findings.
pub fn check_and_report(folder: &RunFolder) -> anyhow::Result<Results> {
    let target = Target::folder(RunFolder::open(&folder.dir));
    let mut tally = Tally::default();
    let results = check::check_observed(&target, true, |op| tally.observe(op))?;
    let checked = Checked {
        results: &results,
        tally: &tally,
    };
    let excerpt = match run_report::wanted(folder, &checked) {
        Some(wanted) => Excerpt::gather(check::ops(&target)?, &wanted).map_err(BadInput::from)?,
        None => Excerpt::default(),
    };
    run_report::render(folder, &checked, &excerpt)?;
    Ok(results)
}
