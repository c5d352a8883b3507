//! One run's load against any cluster: the clients, the nemesis, the heal and the final
//! reads, with the history recorded as they go.

use crate::driver::{drive, final_reads, CounterClient, Nemesis, Plane, Progress, Recorder};
use crate::workload::nemesis;
use crate::workload::Workload;
use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One run's load: the clients, the nemesis and the final reads, against any cluster.
pub struct Load<'a> {
    /// The effective workload.
    pub workload: &'a Workload,
    /// The run's seed.
    pub seed: u64,
    /// The nodes' ids, in order.
    pub ids: Vec<String>,
    /// Where the history goes.
    pub recorder: Arc<Recorder>,
    /// Whether to show the progress display.
    pub progress: bool,
}

impl Load<'_> {
    /// Drives the workload through `client` while the nemesis plays its schedule on `plane`
    /// (none: no faults); then heals the cluster and reads every counter from every node. A
    /// stop signal (Ctrl-C, SIGTERM, SIGHUP: `shutdown`) stops the load early and sets
    /// `interrupted`.
    pub async fn drive<C: CounterClient, P: Plane>(
        self,
        client: Arc<C>,
        plane: Option<Arc<P>>,
        interrupted: Arc<AtomicBool>,
    ) -> anyhow::Result<()> {
        let (w, recorder) = (self.workload, self.recorder);
        let stop = Arc::new(AtomicBool::new(false));
        let on_signal = {
            let (stop, interrupted) = (stop.clone(), interrupted);
            tokio::spawn(async move {
                crate::shutdown::wait().await;
                interrupted.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
            })
        };
        let schedule = nemesis::schedule(
            &w.nemesis,
            &self.ids,
            w.phases.warmup_s,
            w.time_limit,
            self.seed,
        );
        let nemesis = plane.map(|p| Arc::new(Nemesis::new(p, recorder.clone())));
        let faults_stop = Arc::new(AtomicBool::new(false));
        let faults = nemesis.clone().map(|n| {
            tokio::spawn(n.run(schedule, tokio::time::Instant::now(), faults_stop.clone()))
        });
        let progress = self
            .progress
            .then(|| Progress::start(recorder.clone(), Duration::from_secs_f64(w.time_limit)));
        let driven = drive(client.clone(), w, self.seed, recorder.clone(), stop.clone()).await;
        if let Some(progress) = progress {
            progress.finish();
        }
        faults_stop.store(true, Ordering::Relaxed);
        let faulted = match faults {
            Some(task) => task
                .await
                .map_err(|e| anyhow::anyhow!("the nemesis failed: {e}"))?,
            None => Ok(()),
        };
        // Heal even when the load failed, so that no fault outlives the run; the load's error,
        // if any, is the one to report.
        let healed = match &nemesis {
            Some(nemesis) => nemesis.heal(w.phases.repair).await,
            None => Ok(()),
        };
        if driven.is_ok() && healed.is_ok() && !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_secs_f64(w.phases.heal_s)).await;
            if w.phases.final_reads {
                final_reads(client.as_ref(), w, &recorder)
                    .await
                    .context("final reads")?;
            }
        }
        on_signal.abort();
        driven.context("driving the workload")?;
        faulted.context("recording a fault")?;
        healed.context("recording the heal")?;
        Ok(())
    }
}
