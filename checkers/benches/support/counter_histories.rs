//! Histories of an ideal counter with several keys, adds of both signs, reads, and adds that
//! time out (`info`: they took effect or not) or fail (they did not): every op takes effect
//! at one instant between its call and its return, so the history is linearizable by
//! construction. With `bad_read`, one read returns one more than its sum could be.

use checkers::{Op, OpType, Process, F};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct CounterPlan {
    /// Concurrent clients, each with one op in flight at a time.
    pub clients: usize,
    /// Counters, named "c/0", "c/1", …
    pub keys: usize,
    /// Ops in all.
    pub ops: usize,
    /// Share of adds whose outcome is unknown, and of adds that fail.
    pub unknown: f64,
    /// Share of adds that fail.
    pub failed: f64,
    /// Make one read impossible: it returns more than every add could have made.
    pub bad_read: bool,
    /// The random seed.
    pub seed: u64,
}

struct Planned {
    client: usize,
    key: usize,
    call: u64,
    lin: u64,
    ret: u64,
    delta: Option<i64>,
    outcome: OpType,
    applied: bool,
    read: i64,
}

/// Generates the history `plan` describes: counters start at 0.
pub fn counter_history(plan: CounterPlan) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(plan.seed);
    let mut ops: Vec<Planned> = Vec::with_capacity(plan.ops);
    for client in 0..plan.clients {
        let mut t = rng.gen_range(0..10u64);
        for _ in 0..plan.ops / plan.clients {
            let (call, lin) = (t, t + rng.gen_range(1..20));
            let ret = lin + rng.gen_range(1..20);
            let add = rng.gen_bool(0.6);
            let roll: f64 = rng.gen();
            let outcome = if !add || roll >= plan.unknown + plan.failed {
                OpType::Ok
            } else if roll < plan.unknown {
                OpType::Info
            } else {
                OpType::Fail
            };
            ops.push(Planned {
                client,
                key: rng.gen_range(0..plan.keys),
                call,
                lin,
                ret,
                delta: add.then(|| rng.gen_range(-3..=5)),
                applied: match outcome {
                    OpType::Ok => true,
                    OpType::Info => rng.gen_bool(0.5),
                    _ => false,
                },
                outcome,
                read: 0,
            });
            t = ret + rng.gen_range(0..5);
        }
    }
    let mut by_lin: Vec<usize> = (0..ops.len()).collect();
    by_lin.sort_by_key(|&i| (ops[i].lin, i));
    let mut sums = vec![0i64; plan.keys];
    for &i in &by_lin {
        let op = &mut ops[i];
        match op.delta {
            Some(d) if op.applied => sums[op.key] += d,
            Some(_) => {}
            None => op.read = sums[op.key],
        }
    }
    if plan.bad_read {
        let all_adds: i64 = ops.iter().filter_map(|o| o.delta).map(i64::abs).sum();
        if let Some(read) = ops.iter_mut().rev().find(|o| o.delta.is_none()) {
            read.read = all_adds + 1;
        }
    }
    layout(&ops)
}

fn layout(ops: &[Planned]) -> Vec<Op> {
    let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(ops.len() * 2);
    for (i, p) in ops.iter().enumerate() {
        events.push((p.call, 1, i));
        events.push((p.ret, 0, i));
    }
    events.sort_unstable();
    events
        .iter()
        .enumerate()
        .map(|(index, &(time, is_call, i))| {
            let p = &ops[i];
            let (f, kind, value): (F, OpType, Value) = match (p.delta, is_call) {
                (Some(d), 1) => (F::Add, OpType::Invoke, json!(d)),
                (Some(d), _) => (F::Add, p.outcome, json!(d)),
                (None, 1) => (F::Read, OpType::Invoke, Value::Null),
                (None, _) => (F::Read, OpType::Ok, json!(p.read)),
            };
            let key = Some(format!("c/{}", p.key));
            let mut op = Op::new(Process::Client(p.client as u64), kind, f, key, value);
            op.index = index as u64;
            op.time = time;
            op
        })
        .collect()
}
