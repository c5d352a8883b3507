//! Benchmark of the charts and the report page for a generated history of 1 M operations
//! (`BENCH_OPS=N` for another size): time and peak heap of rebuilding a run folder (one
//! pass that checks the history, keeps reads for the charts and tallies it; twelve PNG and
//! SVG charts; the history read again for the ops around findings; report.html), against
//! the baseline of only checking the same history (what `checker check` does), in the same
//! run.
//! Run with `cargo bench --bench report`.

use checker::check::{check_streamed, Target};
use checker::runner::check_and_report;
use checker::store::RunFolder;
use checkers::history::JsonlWriter;

#[path = "../checkers/benches/support/measure.rs"]
mod measure;
use measure::measure;

#[path = "../checkers/benches/support/generator.rs"]
mod generator;
use generator::Generator;

fn main() -> anyhow::Result<()> {
    let ops: u64 = std::env::var("BENCH_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir()?;
    let history = dir.path().join("history.jsonl");
    let mut writer = JsonlWriter::create(&history)?;
    for mut op in Generator::new(ops) {
        op.time = op.index * 20_000; // 50 k events per second: a 20 s run per million
        writer.write(&op)?;
    }
    drop(writer);
    let size = std::fs::metadata(&history)?.len();
    println!("{ops} ops, history {:.0} MB", size as f64 / 1e6);
    let target = Target::file(&history);
    let (checked, check_time, check_peak) = measure(|| check_streamed(&target));
    checked?;
    println!(
        "check only (baseline)      {:>7.2} s {:>8.1} MB peak heap",
        check_time.as_secs_f64(),
        check_peak as f64 / 1e6
    );
    let folder = RunFolder::open(dir.path());
    let (rendered, time, peak) = measure(|| check_and_report(&folder));
    rendered?;
    let charts = std::fs::read_dir(dir.path().join("plots"))?.count();
    let page = std::fs::metadata(folder.report())?.len();
    println!(
        "charts and report page     {:>7.2} s {:>8.1} MB peak heap  {:.1}x baseline; {charts} chart files, report.html {:.1} MB",
        time.as_secs_f64(),
        peak as f64 / 1e6,
        time.as_secs_f64() / check_time.as_secs_f64(),
        page as f64 / 1e6
    );
    Ok(())
}
