//! Benchmark of `checker check` on a long history (10 M events over 16 counters by default,
//! `BENCH_OPS=N` for another size, `BENCH_DELETES=0` for one that deletes nothing): its events per second and peak resident memory against
//! the ceiling, a plain typed serde_json parse of the same file (parse each line into an
//! `Op` and drop it), measured in the same run, each in a process of its own.
//! Run with `cargo bench --bench long_history`.

use checkers::history::JsonlWriter;
use checkers::Op;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../checkers/benches/support/generator.rs"]
mod generator;
use generator::Generator;

/// Counters in the generated history, as in a soak of the hot-counter workloads.
const KEYS: usize = 16;
/// Set in the child that only parses: the history's path.
const PARSE_ONLY: &str = "LONG_HISTORY_PARSE_ONLY";

fn main() -> anyhow::Result<()> {
    if let Ok(path) = std::env::var(PARSE_ONLY) {
        let events = parse_only(Path::new(&path))?;
        println!("{events}");
        return Ok(());
    }
    let ops: u64 = std::env::var("BENCH_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let deletes = std::env::var("BENCH_DELETES").map_or(true, |d| d != "0");
    let history = history(ops, deletes)?;
    let size = std::fs::metadata(&history)?.len();
    println!(
        "{ops} events over {KEYS} counters{}, history {:.0} MB ({})",
        if deletes { "" } else { " (no deletes)" },
        size as f64 / 1e6,
        history.display()
    );
    let me = std::env::current_exe()?;
    let parse = child(Command::new(me).env(PARSE_ONLY, &history))?;
    let check = child(
        Command::new(env!("CARGO_BIN_EXE_checker"))
            .arg("check")
            .arg(&history),
    )?;
    let rate = |d: Duration| ops as f64 / d.as_secs_f64();
    for (name, run) in [("typed parse (ceiling)", &parse), ("checker check", &check)] {
        println!(
            "{name:<22} {:>7.2} s {:>10.0} events/s {:>8.1} MB peak RSS  exit {}",
            run.elapsed.as_secs_f64(),
            rate(run.elapsed),
            run.peak_rss as f64 / 1e6,
            run.exit
        );
    }
    println!(
        "checker check at {:.2}x the parse's events/s, {:.1}x its peak RSS",
        rate(check.elapsed) / rate(parse.elapsed),
        check.peak_rss as f64 / parse.peak_rss.max(1) as f64
    );
    Ok(())
}

/// The generated history of `ops` events (with deletes or not), written once under the
/// target folder and reused.
fn history(ops: u64, deletes: bool) -> anyhow::Result<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("long-history");
    std::fs::create_dir_all(&dir)?;
    let name = match deletes {
        true => format!("history-{ops}-{KEYS}.jsonl"),
        false => format!("history-{ops}-{KEYS}-no-deletes.jsonl"),
    };
    let path = dir.join(name);
    if !path.exists() {
        let partial = path.with_extension("partial");
        let mut writer = JsonlWriter::create(&partial)?;
        let generator = Generator::with_keys(ops, KEYS);
        let generator = match deletes {
            true => generator,
            false => generator.without_deletes(),
        };
        for mut op in generator {
            op.time = op.index * 1_000_000; // 1,000 events a second, as in a soak
            writer.write(&op)?;
        }
        drop(writer);
        std::fs::rename(&partial, &path)?;
    }
    Ok(path)
}

/// The ceiling: every line parsed into an `Op`, then dropped.
fn parse_only(path: &Path) -> anyhow::Result<u64> {
    let mut input = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut line = String::new();
    let mut events = 0;
    while input.read_line(&mut line)? > 0 {
        let op: Op = serde_json::from_str(&line)?;
        std::hint::black_box(op);
        events += 1;
        line.clear();
    }
    Ok(events)
}

/// What a child process took.
struct Run {
    elapsed: Duration,
    peak_rss: u64,
    exit: i32,
}

/// Runs a child to its end, with its wall time and peak resident memory (from `wait4`).
fn child(command: &mut Command) -> anyhow::Result<Run> {
    let start = Instant::now();
    let child = command.stdout(std::process::Stdio::null()).spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data the kernel fills in; the child is ours and not yet
    // waited for (std never waits for a `Child` on its own).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    anyhow::ensure!(waited == pid, "wait4: {}", std::io::Error::last_os_error());
    Ok(Run {
        elapsed: start.elapsed(),
        peak_rss: usage.ru_maxrss as u64 * 1024,
        exit: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
    })
}
