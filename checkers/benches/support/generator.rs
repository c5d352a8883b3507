//! A generated history of an ideal counter per key, streamed op by op: the benchmarks'
//! input, never held in memory.

use checkers::{Op, OpType, Process, F};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Clients in flight at once.
pub const CLIENTS: usize = 32;
/// Counters; one in four ops goes to the first (the hot counter).
#[allow(dead_code)] // not every benchmark that includes this file asks
pub const KEYS: usize = 1_000;

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
pub struct Generator {
    rng: StdRng,
    counters: Vec<Option<i64>>,
    in_flight: Vec<Option<InFlight>>,
    processes: Vec<u64>,
    next_process: u64,
    index: u64,
    remaining: u64,
    keys: usize,
    /// Whether one op in 100 deletes its counter.
    deletes: bool,
}

impl Generator {
    /// A generator of `ops` events over `KEYS` counters.
    #[allow(dead_code)] // not every benchmark that includes this file asks
    pub fn new(ops: u64) -> Self {
        Self::with_keys(ops, KEYS)
    }

    /// A generator of `ops` events over `keys` counters.
    #[allow(dead_code)] // not every benchmark that includes this file asks
    pub fn with_keys(ops: u64, keys: usize) -> Self {
        Generator {
            rng: StdRng::seed_from_u64(7),
            counters: vec![None; keys],
            in_flight: (0..CLIENTS).map(|_| None).collect(),
            processes: (0..CLIENTS as u64).collect(),
            next_process: CLIENTS as u64,
            index: 0,
            remaining: ops,
            keys,
            deletes: true,
        }
    }

    /// The same history with reads where the deletes would be.
    #[allow(dead_code)] // not every benchmark that includes this file asks
    pub fn without_deletes(mut self) -> Self {
        self.deletes = false;
        self
    }

    fn invoke(&mut self, client: usize) -> Op {
        let key = if self.rng.gen_bool(0.25) {
            0
        } else {
            self.rng.gen_range(0..self.keys)
        };
        let (f, delta) = match self.rng.gen_range(0..100) {
            0..=59 => (F::Add, [1, 1, 1, -1, 5][self.rng.gen_range(0..5)]),
            60..=98 => (F::Read, 0),
            _ if !self.deletes => (F::Read, 0),
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
