//! The live progress display: a bar on a terminal, plain lines otherwise.

use super::recorder::{Recorder, Tally};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a plain progress line is printed when stderr is not a terminal.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// Shows elapsed time of the limit and ok / info / fail counts until dropped.
pub struct Progress {
    task: tokio::task::JoinHandle<()>,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Starts showing progress of a run limited to `limit`.
    pub fn start(recorder: Arc<Recorder>, limit: Duration) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(limit.as_secs().max(1));
            let style =
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len}s {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        let shown = bar.clone();
        let task = tokio::spawn(async move {
            let start = Instant::now();
            let mut last_plain = Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let counts = describe(&recorder.tally);
                match &shown {
                    Some(bar) => {
                        bar.set_position(start.elapsed().as_secs().min(limit.as_secs()));
                        bar.set_message(counts);
                    }
                    None if last_plain.elapsed() >= PLAIN_EVERY => {
                        last_plain = Instant::now();
                        eprintln!(
                            "progress: {:.0}s of {:.0}s, {counts}",
                            start.elapsed().as_secs_f64(),
                            limit.as_secs_f64()
                        );
                    }
                    None => {}
                }
            }
        });
        Progress { task, bar }
    }

    /// Stops the display.
    pub fn finish(self) {
        drop(self);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn describe(tally: &Tally) -> String {
    format!(
        "ok {} · info {} · fail {}",
        tally.ok.load(Ordering::Relaxed),
        tally.info.load(Ordering::Relaxed),
        tally.fail.load(Ordering::Relaxed)
    )
}
