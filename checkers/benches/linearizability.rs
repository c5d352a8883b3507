//! Benchmark of the linearizability checker: every peer history (Knossos, Porcupine, Jepsen)
//! and generated counter histories (10, 50, 100 clients; 10 k and 100 k ops; ideal-counter
//! histories of 20 k, 200 k and 2 M ops with 5, 20 and 50 clients), with the time
//! and the peak heap of each, next to the time to read the same file (the baseline measured
//! in the same run). Run with `cargo bench -p checkers --bench linearizability` (`-- counter`:
//! the ideal-counter rows only).

use checkers::counter::CounterChecker;
use checkers::history::{read_history, Format, JsonlWriter, ReadOptions};
use checkers::linear::{check, LinOptions, ModelKind, Val};
use checkers::{Op, OpType, Process, F};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

#[path = "support/measure.rs"]
mod measure;
use measure::measure;

#[path = "support/peak_rss.rs"]
mod peak_rss;
use peak_rss::peak_rss;

#[path = "support/counter_histories.rs"]
mod counter_histories;
use counter_histories::{counter_history, CounterPlan};

#[path = "support/kv_histories.rs"]
mod kv_histories;
use kv_histories::{kv_history, KvPlan};

/// A concurrent history of an ideal counter: every op takes effect at a point between its
/// call and its return, so the history is linearizable by construction.
fn generated(clients: usize, total: usize, seed: u64) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    struct Planned {
        client: usize,
        call: u64,
        lin: u64,
        ret: u64,
        add: bool,
    }
    let mut planned = Vec::with_capacity(total);
    for client in 0..clients {
        let mut t = rng.gen_range(0..5);
        for _ in 0..total / clients {
            let call = t;
            let lin = call + rng.gen_range(1..10);
            let ret = lin + rng.gen_range(1..10);
            planned.push(Planned {
                client,
                call,
                lin,
                ret,
                add: rng.gen_bool(0.7),
            });
            t = ret + rng.gen_range(0..5);
        }
    }
    let mut by_lin: Vec<usize> = (0..planned.len()).collect();
    by_lin.sort_by_key(|&i| (planned[i].lin, i));
    let mut value = 0i64;
    let mut read_value = vec![0i64; planned.len()];
    for &i in &by_lin {
        if planned[i].add {
            value += 1;
        } else {
            read_value[i] = value;
        }
    }
    let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(planned.len() * 2);
    for (i, p) in planned.iter().enumerate() {
        events.push((p.call, 1, i));
        events.push((p.ret, 0, i));
    }
    events.sort_unstable();
    events
        .iter()
        .enumerate()
        .map(|(index, &(time, is_call, i))| {
            let p = &planned[i];
            let (f, value): (F, Value) = match (p.add, is_call) {
                (true, _) => (F::Add, json!(1)),
                (false, 1) => (F::Read, Value::Null),
                (false, _) => (F::Read, json!(read_value[i])),
            };
            let kind = if is_call == 1 {
                OpType::Invoke
            } else {
                OpType::Ok
            };
            let mut op = Op::new(
                Process::Client(p.client as u64),
                kind,
                f,
                Some("c/hot".into()),
                value,
            );
            op.index = index as u64;
            op.time = time;
            op
        })
        .collect()
}

fn peer_rows() -> Vec<(PathBuf, Format, ModelKind, Val, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/peer-histories");
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv"))
        .expect("tests/data/peer-histories/MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let (name, init) = cols.get(2)?.split_once('(').unwrap_or((cols[2], "nil)"));
            Some((
                dir.join(cols[0]),
                cols[1].parse().ok()?,
                name.parse().ok()?,
                init.trim_end_matches(')').parse().ok()?,
                cols.get(3)?.to_string(),
            ))
        })
        .collect()
}

fn main() {
    // `cargo bench --bench linearizability -- counter` runs the counter rows only.
    let only = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    if only.as_deref() == Some("counter") {
        counter_rows();
        return;
    }
    let options = |init: Val| LinOptions {
        init,
        time_limit: Some(Duration::from_secs(120)),
        ..LinOptions::default()
    };
    println!(
        "{:<58} {:>8} {:>9} {:>10} {:>10} {:>11}",
        "history", "ops", "verdict", "check ms", "read ms", "peak heap"
    );
    let mut totals: std::collections::BTreeMap<String, (Duration, Duration)> = Default::default();
    for (path, format, model, init, expected) in peer_rows() {
        let ((ops, _), read_time, _) = measure(|| {
            read_history(&path, Some(format), ReadOptions::default()).unwrap_or_default()
        });
        let (result, time, peak) = measure(|| check(model, &ops, &options(init)));
        let verdict = result
            .map(|r| format!("{:?}", r.valid))
            .unwrap_or_else(|e| e.to_string());
        let name = path
            .strip_prefix(path.ancestors().nth(3).unwrap_or(&path))
            .unwrap_or(&path)
            .display()
            .to_string();
        println!(
            "{name:<58} {:>8} {:>9} {:>10.2} {:>10.2} {:>9.1} MB   (expected {expected})",
            ops.len(),
            verdict,
            ms(time),
            ms(read_time),
            mb(peak)
        );
        let set = name.split('/').take(2).collect::<Vec<_>>().join("/");
        let entry = totals.entry(set).or_default();
        entry.0 += time;
        entry.1 += read_time;
    }
    for clients in [10, 50, 100] {
        for total in [10_000, 100_000] {
            let ops = generated(clients, total, 7);
            let (result, time, peak) =
                measure(|| check(ModelKind::Counter, &ops, &options(Val::Int(0))));
            let verdict = result
                .map(|r| format!("{:?}", r.valid))
                .unwrap_or_else(|e| e.to_string());
            let name = format!("generated counter, {clients} clients, {total} ops");
            println!(
                "{name:<58} {:>8} {:>9} {:>10.2} {:>10} {:>9.1} MB",
                ops.len(),
                verdict,
                ms(time),
                "-",
                mb(peak)
            );
        }
    }
    kv_rows();
    counter_rows();
    hard_counter(60);
    println!();
    for (set, (check_time, read_time)) in totals {
        println!(
            "{set:<30} check {:>9.2} ms in total, read {:>8.2} ms (check/read {:.1}x)",
            ms(check_time),
            ms(read_time),
            check_time.as_secs_f64() / read_time.as_secs_f64().max(1e-9)
        );
    }
    println!("Porcupine (Go, README): all 102 etcd histories ~440 ms, kv with 50 clients ~180 ms");
}

/// Porcupine-style kv histories, 50 and 100 clients, with and without a stale read, checked
/// stopping at the first illegal key and with every key searched; each file is also written
/// to `target/lin-bench/` for `checker lin`.
fn kv_rows() {
    println!();
    println!(
        "{:<58} {:>8} {:>9} {:>10} {:>11} {:>11}",
        "generated kv history", "ops", "verdict", "check ms", "peak heap", "peak RSS"
    );
    for (clients, ops_per_client) in [(50, 60), (100, 60), (50, 400)] {
        for violation in [false, true] {
            let plan = KvPlan {
                clients,
                keys: 10,
                ops_per_client,
                violation,
                seed: 1,
            };
            let (ops, _) = kv_history(plan);
            let name = format!(
                "kv-c{clients}-n{}-{}",
                clients * ops_per_client,
                if violation { "bad" } else { "ok" }
            );
            write_history(&name, &ops);
            for all_partitions in [false, true] {
                let options = LinOptions {
                    time_limit: Some(Duration::from_secs(60)),
                    all_partitions,
                    ..LinOptions::default()
                };
                let ((result, time, heap), rss) =
                    peak_rss(|| measure(|| check(ModelKind::Kv, &ops, &options)));
                let verdict = result
                    .map(|r| format!("{:?}", r.valid))
                    .unwrap_or_else(|e| e.to_string());
                let label = if all_partitions {
                    "every key"
                } else {
                    "first illegal"
                };
                println!(
                    "{:<58} {:>8} {:>9} {:>10.2} {:>8.1} MB {:>8} MB",
                    format!("{name} ({label})"),
                    ops.len(),
                    verdict,
                    ms(time),
                    mb(heap),
                    rss.map_or("?".to_string(), |b| format!("{:.1}", mb(b)))
                );
            }
        }
    }
}

/// Ideal-counter histories (4 keys, adds of -3..5, 5 % unknown and 5 % failed adds), with
/// the linearizability check's ops/s next to the counter checker's on the same ops.
fn counter_rows() {
    println!();
    println!(
        "{:<44} {:>8} {:>9} {:>10} {:>12} {:>14} {:>10}",
        "generated ideal counter",
        "ops",
        "verdict",
        "lin ms",
        "lin ops/s",
        "counter ops/s",
        "peak RSS"
    );
    for (ops, clients) in [
        (20_000, 5),
        (20_000, 20),
        (20_000, 50),
        (200_000, 5),
        (200_000, 20),
        (200_000, 50),
        (2_000_000, 5),
        (2_000_000, 20),
        (2_000_000, 50),
    ] {
        for bad_read in [false, true] {
            let plan = CounterPlan {
                clients,
                keys: 4,
                ops,
                unknown: 0.05,
                failed: 0.05,
                bad_read,
                seed: 3,
            };
            let history = counter_history(plan);
            let name = format!(
                "counter-c{clients}-n{ops}-{}",
                if bad_read { "bad" } else { "ok" }
            );
            write_history(&name, &history);
            // The limit `checker check` and runs give the search.
            let options = LinOptions {
                init: Val::Int(0),
                time_limit: Some(Duration::from_secs(60)),
                ..LinOptions::default()
            };
            let ((result, time, _), rss) =
                peak_rss(|| measure(|| check(ModelKind::Counter, &history, &options)));
            let (_, counter_time, _) = measure(|| {
                let mut checker = CounterChecker::new();
                history.iter().for_each(|op| checker.observe(op));
                checker.finish()
            });
            let verdict = result
                .map(|r| format!("{:?}", r.valid))
                .unwrap_or_else(|e| e.to_string());
            let rate = |d: Duration| history.len() as f64 / d.as_secs_f64();
            println!(
                "{:<44} {:>8} {:>9} {:>10.1} {:>12.0} {:>14.0} {:>7} MB",
                format!(
                    "{ops} ops, {clients} clients{}",
                    if bad_read { ", bad read" } else { "" }
                ),
                history.len(),
                verdict,
                ms(time),
                rate(time),
                rate(counter_time),
                rss.map_or("?".to_string(), |b| format!("{:.0}", mb(b)))
            );
        }
    }
}

/// A history hard for any search: `adds` concurrent adds of distinct amounts, then a read of
/// an odd sum inside their range, which no subset of these even amounts makes, so no bound
/// rules it out and every subset must be tried; written to
/// `target/lin-bench/hard-counter.jsonl` for `checker lin --time-limit` and `--memory-limit`.
fn hard_counter(adds: u64) {
    let mut ops = Vec::new();
    let mut push = |process: u64, kind: OpType, f: F, value: Value| {
        let mut op = Op::new(
            Process::Client(process),
            kind,
            f,
            Some("c/hard".into()),
            value,
        );
        op.index = ops.len() as u64;
        ops.push(op);
    };
    for p in 0..adds {
        push(p, OpType::Invoke, F::Add, json!(2 * (p + 1)));
    }
    push(adds, OpType::Invoke, F::Read, Value::Null);
    push(adds, OpType::Ok, F::Read, json!(adds * (adds + 1) - 1));
    for p in 0..adds {
        push(p, OpType::Ok, F::Add, json!(2 * (p + 1)));
    }
    write_history("hard-counter", &ops);
}

/// Writes a generated history to `target/lin-bench/NAME.jsonl`, for `checker lin`.
fn write_history(name: &str, ops: &[Op]) {
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/lin-bench");
    let _ = std::fs::create_dir_all(&out);
    if let Ok(file) = std::fs::File::create(out.join(format!("{name}.jsonl"))) {
        let mut writer = JsonlWriter::new(std::io::BufWriter::new(file), &out);
        let _ = ops.iter().try_for_each(|op| writer.write(op));
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}
