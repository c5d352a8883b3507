//! Benchmark of the accuracy checkers on a generated 10-million-op history, streamed (never
//! held in memory): ops/s and peak heap of the counter checker and of every checker together
//! (linearizability apart), against the baseline of generating the same ops and only
//! counting them, measured in the same run.
//! Run with `cargo bench -p checkers --bench counter` (`BENCH_OPS=N` for another size,
//! `BENCH_DELETES=0` for a history that deletes nothing, as the hot-counter workloads).

use checkers::counter::CounterChecker;
use checkers::results::{self, CheckOptions};

#[path = "support/measure.rs"]
mod measure;
use measure::measure;

#[path = "support/generator.rs"]
mod generator;
use generator::{Generator, CLIENTS, KEYS};

fn main() {
    let ops: u64 = std::env::var("BENCH_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let deletes = std::env::var("BENCH_DELETES").map_or(true, |d| d != "0");
    let generator = move || match deletes {
        true => Generator::new(ops),
        false => Generator::new(ops).without_deletes(),
    };
    println!(
        "{ops} ops, {CLIENTS} clients, {KEYS} counters (a quarter of ops on one){}",
        if deletes { "" } else { ", no deletes" }
    );
    let (count, base_time, base_peak) = measure(|| generator().count());
    let row = |name: &str, time: std::time::Duration, peak: usize, verdict: String| {
        let rate = count as f64 / time.as_secs_f64();
        let ratio = time.as_secs_f64() / base_time.as_secs_f64();
        println!(
            "{name:<34} {:>8.2} s {:>12.0} ops/s {:>6.1}x baseline {:>8.1} MB peak  {verdict}",
            time.as_secs_f64(),
            rate,
            ratio,
            peak as f64 / 1e6
        );
    };
    row(
        "generate only (baseline)",
        base_time,
        base_peak,
        String::new(),
    );
    let (result, time, peak) = measure(|| {
        let mut checker = CounterChecker::new();
        generator().for_each(|op| checker.observe(&op));
        checker.finish()
    });
    let verdict = format!(
        "{:?}: {} reads, {} over, {} under, {} resurrected",
        result.valid,
        result.reads,
        result.overcount.reads,
        result.undercount.reads,
        result.resurrection.reads
    );
    row("generate + counter checker", time, peak, verdict);
    let (result, time, peak) =
        measure(|| results::check(generator().map(Ok), &CheckOptions::default()));
    let verdict = match result {
        Ok(r) => format!("{:?}", r.valid),
        Err(e) => e.to_string(),
    };
    row("generate + every checker (no lin)", time, peak, verdict);
}
