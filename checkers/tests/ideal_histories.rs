//! Histories of an ideal counter, right by construction, and the exact values they allow.
//!
//! `ideal_history` runs the ideal counter (`checkers::ideal`) under a random interleaving of
//! clients: every op takes effect (or not) at a random point between its invoke and its
//! completion — a failed op never, a timed-out or never-completing one maybe, a retry only
//! if no earlier attempt did — so the order of those points linearizes the history and every
//! read returns a state some legal order gives. Deletes come in every scope (row, column,
//! partition), reads find absent counters, scans leave absent cells out.
//!
//! `brute_force` enumerates every legal order to give the exact states a read may return.
//!
//! The counter holds true sums; a read returns what a 64-bit counter would, wrapping a sum
//! past `i64` as Cassandra does (`HUGE` drives sums there).

use checkers::ideal::{self, State, Sum};
use checkers::{Op, OpType, Process, F};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What the generator may use.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Largest |delta| of an add.
    pub max_delta: i64,
    /// Deletes may time out.
    pub info_deletes: bool,
    /// Events to generate, at most.
    pub events: usize,
    /// Partitions (`c`, `d`, …), each with `cells` counters (`x`, `y`, …).
    pub partitions: usize,
    /// Counters per partition.
    pub cells: usize,
    /// Clients running at once.
    pub clients: usize,
    /// Some reads are scans of a partition, and some cell deletes are column deletes.
    pub scans_and_columns: bool,
    /// The share of adds that decrement.
    pub negative: f64,
    /// Every delta is a multiple of this.
    pub unit: i64,
}

/// Deltas ±1 and no timed-out delete: the checker's answer must be exact.
pub const EXACT: Shape = Shape {
    max_delta: 1,
    info_deletes: false,
    events: 32,
    partitions: 1,
    cells: 2,
    clients: 3,
    scans_and_columns: false,
    negative: 0.35,
    unit: 1,
};

/// Any deltas, deletes that time out too: the checker's answer must contain the truth.
pub const GENERAL: Shape = Shape {
    max_delta: 3,
    info_deletes: true,
    ..EXACT
};

/// Deltas up to 3, deletes always complete.
pub const LARGE_DELTAS: Shape = Shape {
    max_delta: 3,
    ..EXACT
};

/// Everything at once: two partitions of two counters, four clients, scans, column and
/// partition deletes, timeouts of every kind, deltas ±1 and ±2 as often, so that counters
/// often hold 0.
pub const EVERY_SCOPE: Shape = Shape {
    max_delta: 2,
    info_deletes: true,
    events: 48,
    partitions: 2,
    cells: 2,
    clients: 4,
    scans_and_columns: true,
    negative: 0.5,
    unit: 1,
};

/// Deltas of ±3·2^61, so that two adds leave `i64` and a third may bring the sum back;
/// deletes always complete (the bounds are exact, as for `EXACT`).
pub const HUGE: Shape = Shape {
    unit: 3 << 61,
    ..EXACT
};

/// What a 64-bit counter reads for the true sum `sum`: it wraps, as Cassandra's does.
pub fn wrapped(sum: Sum) -> i64 {
    sum as i64
}

impl Shape {
    fn partition(&self, rng: &mut StdRng) -> String {
        ["c", "d", "e", "f"][rng.gen_range(0..self.partitions.min(4))].to_string()
    }

    fn counter(&self, rng: &mut StdRng) -> String {
        let cell = ["x", "y", "z", "w"][rng.gen_range(0..self.cells.min(4))];
        format!("{}/{cell}", self.partition(rng))
    }
}

/// A client's op in flight.
struct Flight {
    f: F,
    key: String,
    delta: i64,
    column: bool,
    invoke: usize,
    took_effect: bool,
    read: Value,
    /// For a retry: an earlier attempt of the same add took effect, so this one must not.
    earlier_applied: bool,
}

/// An add that timed out, which the client's next op may retry.
struct TimedOut {
    invoke: usize,
    key: String,
    delta: i64,
    applied: bool,
}

/// A history of an ideal counter that some legal order explains (see the module doc).
pub fn ideal_history(seed: u64, shape: Shape) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ops: Vec<Op> = Vec::new();
    let mut counters: BTreeMap<String, State> = BTreeMap::new();
    let n = shape.clients;
    let mut in_flight: Vec<Option<Flight>> = (0..n).map(|_| None).collect();
    let mut timed_out: Vec<Option<TimedOut>> = (0..n).map(|_| None).collect();
    let mut ids: Vec<u64> = (0..n as u64).collect();
    let mut next_id = n as u64;
    let push = |ops: &mut Vec<Op>, p: u64, kind, f: F, key: &str, value, retry_of| {
        let mut op = Op::new(Process::Client(p), kind, f, Some(key.into()), value);
        op.index = ops.len() as u64;
        op.time = op.index * 1_000;
        op.retry_of = retry_of;
        ops.push(op);
    };
    while ops.len() < shape.events {
        let p = rng.gen_range(0..n);
        match in_flight[p].take() {
            None => {
                let retry = timed_out[p].take().filter(|_| rng.gen_bool(0.5));
                let (f, key, delta) = match &retry {
                    Some(t) => (F::Add, t.key.clone(), t.delta),
                    None => match rng.gen_range(0..10) {
                        0..=3 => (F::Add, shape.counter(&mut rng), delta(&mut rng, shape)),
                        4..=5 if rng.gen_bool(0.3) => (F::Delete, shape.partition(&mut rng), 0),
                        4..=5 => (F::Delete, shape.counter(&mut rng), 0),
                        6 if shape.scans_and_columns => (F::Scan, shape.partition(&mut rng), 0),
                        _ => (F::Read, shape.counter(&mut rng), 0),
                    },
                };
                let column = f == F::Delete
                    && key.contains('/')
                    && shape.scans_and_columns
                    && rng.gen_bool(0.5);
                let value = match f {
                    F::Add => json!(delta),
                    F::Delete if column => json!({"scope": "column"}),
                    _ => Value::Null,
                };
                let retry_of = retry.as_ref().map(|t| t.invoke as u64);
                push(
                    &mut ops,
                    ids[p],
                    OpType::Invoke,
                    f.clone(),
                    &key,
                    value,
                    retry_of,
                );
                in_flight[p] = Some(Flight {
                    f,
                    key,
                    delta,
                    column,
                    invoke: ops.len() - 1,
                    took_effect: false,
                    read: Value::Null,
                    earlier_applied: retry.is_some_and(|t| t.applied),
                });
            }
            Some(mut flight) if !flight.took_effect && rng.gen_bool(0.5) => {
                take_effect(&mut flight, &mut counters);
                in_flight[p] = Some(flight);
            }
            Some(flight) => {
                let Some(outcome) = outcome(&flight, shape, &mut rng) else {
                    in_flight[p] = Some(flight);
                    continue;
                };
                let value = match flight.f {
                    F::Add => json!(flight.delta),
                    F::Read | F::Scan => flight.read.clone(),
                    _ if flight.column => json!({"scope": "column"}),
                    _ => Value::Null,
                };
                push(
                    &mut ops,
                    ids[p],
                    outcome,
                    flight.f.clone(),
                    &flight.key,
                    value,
                    None,
                );
                if outcome == OpType::Info {
                    ids[p] = next_id;
                    next_id += 1;
                    if flight.f == F::Add {
                        timed_out[p] = Some(TimedOut {
                            invoke: flight.invoke,
                            key: flight.key,
                            delta: flight.delta,
                            applied: flight.took_effect || flight.earlier_applied,
                        });
                    }
                }
            }
        }
    }
    ops
}

/// The op takes effect now (a retry whose original already did, never).
fn take_effect(flight: &mut Flight, counters: &mut BTreeMap<String, State>) {
    match flight.f {
        F::Add if flight.earlier_applied => {}
        F::Add => {
            let counter = counters.entry(flight.key.clone()).or_default();
            *counter = ideal::add(*counter, flight.delta);
            flight.took_effect = true;
        }
        F::Delete => {
            for (key, counter) in counters.iter_mut() {
                if ideal::reaches(&flight.key, key) {
                    *counter = None;
                }
            }
            flight.took_effect = true;
        }
        F::Read => {
            flight.read = json!(counters.get(&flight.key).copied().flatten().map(wrapped));
            flight.took_effect = true;
        }
        _ => {
            let mut cells = Map::new();
            for (key, counter) in counters.iter() {
                if let (Some((partition, cell)), Some(n)) = (key.split_once('/'), counter) {
                    if partition == flight.key {
                        cells.insert(cell.to_string(), json!(wrapped(*n)));
                    }
                }
            }
            flight.read = Value::Object(cells);
            flight.took_effect = true;
        }
    }
}

/// How an op in flight completes now, or none if it must wait (a read that has not taken
/// effect; a delete that has not, when deletes never time out, half the time).
fn outcome(flight: &Flight, shape: Shape, rng: &mut StdRng) -> Option<OpType> {
    let reads = matches!(flight.f, F::Read | F::Scan);
    Some(match (&flight.f, flight.took_effect) {
        (_, true) if reads => OpType::Ok,
        (_, false) if reads => return None,
        (F::Delete, true) if !shape.info_deletes => OpType::Ok,
        (F::Delete, false) if !shape.info_deletes => {
            if rng.gen_bool(0.5) {
                OpType::Fail
            } else {
                return None;
            }
        }
        (_, true) => [OpType::Ok, OpType::Info][rng.gen_range(0..2)],
        // A retry whose original took effect reports ok: the add happened.
        (F::Add, false) if flight.earlier_applied && rng.gen_bool(0.3) => OpType::Ok,
        (_, false) => [OpType::Fail, OpType::Info][rng.gen_range(0..2)],
    })
}

fn delta(rng: &mut StdRng, shape: Shape) -> i64 {
    let magnitude = rng.gen_range(1..=shape.max_delta) * shape.unit;
    if rng.gen_bool(shape.negative) {
        -magnitude
    } else {
        magnitude
    }
}

/// An op of a generated history as the brute force sees it.
#[derive(Debug, Clone)]
struct Interval {
    invoke: usize,
    /// Index of an ok completion; none when it may take effect any time or never.
    complete: Option<usize>,
    /// Whether it must take effect.
    mandatory: bool,
    /// Delta of an add; none for a delete.
    delta: Option<i64>,
}

/// The adds and deletes reaching the counter the read invoked at `read` reads (a retry
/// joined with the attempts before it into one op), and that read.
fn intervals(ops: &[Op], read: usize) -> (Vec<Interval>, Interval) {
    let key = ops[read].key.clone().unwrap_or_default();
    let completion = |i: usize| {
        let at = ops[i + 1..]
            .iter()
            .position(|o| o.process == ops[i].process)?;
        Some((i + 1 + at, ops[i + 1 + at].kind))
    };
    // Each add's first attempt, and per first attempt: (first ok, any attempt may apply).
    let mut root: HashMap<usize, usize> = HashMap::new();
    let mut changes: BTreeMap<usize, (Option<usize>, bool, Option<i64>)> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        if op.kind != OpType::Invoke {
            continue;
        }
        let target = op.key.as_deref().unwrap_or_default();
        let reaches = match op.f {
            F::Add => target == key,
            F::Delete => ideal::reaches(target, &key),
            _ => false,
        };
        if !reaches {
            continue;
        }
        let first = op
            .retry_of
            .and_then(|r| root.get(&(r as usize)).copied())
            .unwrap_or(i);
        root.insert(i, first);
        let entry = changes.entry(first).or_insert((None, false, op.delta()));
        match completion(i) {
            Some((at, OpType::Ok)) => {
                entry.0 = Some(entry.0.map_or(at, |earlier| earlier.min(at)));
                entry.1 = true;
            }
            Some((_, OpType::Fail)) => {}
            _ => entry.1 = true,
        }
    }
    let changes = changes
        .into_iter()
        .filter(|(_, (_, may_apply, _))| *may_apply)
        .map(|(invoke, (ok_at, _, delta))| Interval {
            invoke,
            complete: ok_at,
            mandatory: ok_at.is_some(),
            delta,
        })
        .collect();
    let target = Interval {
        invoke: read,
        complete: completion(read).map(|c| c.0),
        mandatory: true,
        delta: None,
    };
    (changes, target)
}

/// Every state (`None`: absent) some legal order of the history gives the read invoked at
/// `read`.
pub fn brute_force(ops: &[Op], read: usize) -> BTreeSet<State> {
    let (changes, target) = intervals(ops, read);
    let mut all = changes.clone();
    all.push(target);
    let read_at = all.len() - 1;
    let mut seen = HashSet::new();
    let mut values = BTreeSet::new();
    explore(&all, read_at, 0, None, &mut seen, &mut values);
    values
}

fn explore(
    all: &[Interval],
    read_at: usize,
    placed: u64,
    value: State,
    seen: &mut HashSet<(u64, State)>,
    values: &mut BTreeSet<State>,
) {
    if !seen.insert((placed, value)) {
        return;
    }
    for (x, op) in all.iter().enumerate() {
        if placed & (1 << x) != 0 {
            continue;
        }
        // Every mandatory op that completed before x began must already be placed.
        let ready = all.iter().enumerate().all(|(y, other)| {
            placed & (1 << y) != 0
                || !other.mandatory
                || other.complete.is_none_or(|done| done > op.invoke)
        });
        if !ready {
            continue;
        }
        if x == read_at {
            values.insert(value);
            continue;
        }
        let next = op.delta.and_then(|delta| ideal::add(value, delta));
        explore(all, read_at, placed | (1 << x), next, seen, values);
    }
}

/// Invoke indices of the history's reads (not scans) that completed ok.
pub fn ok_reads(ops: &[Op]) -> Vec<usize> {
    ops.iter()
        .enumerate()
        .filter(|(_, op)| op.f == F::Read && op.kind == OpType::Invoke)
        .filter(|(i, op)| {
            ops[i + 1..]
                .iter()
                .find(|o| o.process == op.process)
                .is_some_and(|o| o.kind == OpType::Ok)
        })
        .map(|(i, _)| i)
        .collect()
}

/// The index of the ok completion of the op invoked at `invoke`.
pub fn completion_of(ops: &[Op], invoke: usize) -> usize {
    ops[invoke + 1..]
        .iter()
        .position(|o| o.process == ops[invoke].process)
        .map(|at| invoke + 1 + at)
        .expect("a completed op")
}
