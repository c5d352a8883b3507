//! Benchmark of the accuracy checkers on a generated 10-million-op history, streamed (never
//! held in memory): ops/s and peak heap of the counter checker and of every checker together
//! (linearizability apart), against the baseline of generating the same ops and only
//! counting them, measured in the same run.
//! Run with `cargo bench -p checkers --bench counter` (`BENCH_OPS=N` for another size).

use checkers::counter::CounterChecker;
use checkers::results::{self, CheckOptions};
use checkers::{Op, OpType, Process, F};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

#[path = "support/measure.rs"]
mod measure;
use measure::measure;

/// Clients in flight at once.
const CLIENTS: usize = 32;
/// Counters; one in four ops goes to the first (the hot counter).
const KEYS: usize = 1_000;

/// An op a client has invoked: what it does and whether it will time out.
struct InFlight {
    f: F,
    key: String,
    delta: i64,
    outcome: OpType,
}

/// An ideal counter per key driven by `CLIENTS` clients: adds (±1, some larger), reads,
/// row deletes; 1% of changes time out and 1% fail. Every op takes effect at its completion
/// (or not at all), so no read is out of bounds.
struct Generator {
    rng: StdRng,
    counters: Vec<Option<i64>>,
    in_flight: Vec<Option<InFlight>>,
    processes: Vec<u64>,
    next_process: u64,
    index: u64,
    remaining: u64,
}

impl Generator {
    fn new(ops: u64) -> Self {
        Generator {
            rng: StdRng::seed_from_u64(7),
            counters: vec![None; KEYS],
            in_flight: (0..CLIENTS).map(|_| None).collect(),
            processes: (0..CLIENTS as u64).collect(),
            next_process: CLIENTS as u64,
            index: 0,
            remaining: ops,
        }
    }

    fn invoke(&mut self, client: usize) -> Op {
        let key = if self.rng.gen_bool(0.25) {
            0
        } else {
            self.rng.gen_range(0..KEYS)
        };
        let (f, delta) = match self.rng.gen_range(0..100) {
            0..=59 => (F::Add, [1, 1, 1, -1, 5][self.rng.gen_range(0..5)]),
            60..=98 => (F::Read, 0),
            _ => (F::Delete, 0),
        };
        let outcome = match self.rng.gen_range(0..100) {
            0 if f != F::Read => OpType::Info,
            1 if f != F::Read => OpType::Fail,
            _ => OpType::Ok,
        };
        let key = format!("k/{key}");
        let value = if f == F::Add {
            json!(delta)
        } else {
            Value::Null
        };
        let op = self.op(client, OpType::Invoke, f.clone(), &key, value);
        self.in_flight[client] = Some(InFlight {
            f,
            key,
            delta,
            outcome,
        });
        op
    }

    fn complete(&mut self, client: usize, flight: InFlight) -> Op {
        let slot: usize = flight.key[2..].parse().unwrap_or(0);
        let applies = flight.outcome == OpType::Ok
            || (flight.outcome == OpType::Info && self.rng.gen_bool(0.5));
        let value = match flight.f {
            F::Add if applies => {
                self.counters[slot] = Some(self.counters[slot].unwrap_or(0) + flight.delta);
                json!(flight.delta)
            }
            F::Add => json!(flight.delta),
            F::Delete if applies => {
                self.counters[slot] = None;
                Value::Null
            }
            F::Read => json!(self.counters[slot]),
            _ => Value::Null,
        };
        let op = self.op(client, flight.outcome, flight.f, &flight.key, value);
        if flight.outcome == OpType::Info {
            self.processes[client] = self.next_process;
            self.next_process += 1;
        }
        op
    }

    fn op(&mut self, client: usize, kind: OpType, f: F, key: &str, value: Value) -> Op {
        let process = Process::Client(self.processes[client]);
        let mut op = Op::new(process, kind, f, Some(key.to_string()), value);
        op.index = self.index;
        op.time = self.index * 1_000;
        self.index += 1;
        op
    }
}

impl Iterator for Generator {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let client = self.rng.gen_range(0..CLIENTS);
        Some(match self.in_flight[client].take() {
            None => self.invoke(client),
            Some(flight) => self.complete(client, flight),
        })
    }
}

fn main() {
    let ops: u64 = std::env::var("BENCH_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    println!("{ops} ops, {CLIENTS} clients, {KEYS} counters (a quarter of ops on one)");
    let (count, base_time, base_peak) = measure(|| Generator::new(ops).count());
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
        Generator::new(ops).for_each(|op| checker.observe(&op));
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
        measure(|| results::check(Generator::new(ops).map(Ok), &CheckOptions::default()));
    let verdict = match result {
        Ok(r) => format!("{:?}", r.valid),
        Err(e) => e.to_string(),
    };
    row("generate + every checker (no lin)", time, peak, verdict);
}
