//! Porcupine-style key-value histories: many clients on ten keys, mostly appends and gets,
//! each op taking effect at one instant between its call and its return, so the history is
//! linearizable by construction; or with one injected stale read, which makes exactly one key
//! not linearizable.

use checkers::{Op, OpType, Process, F};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct KvPlan {
    /// Concurrent clients, each with one op in flight at a time.
    pub clients: usize,
    /// Keys, named "0", "1", …
    pub keys: usize,
    /// Ops per client.
    pub ops_per_client: usize,
    /// Inject one stale read (a get that misses a write completed before it was called).
    pub violation: bool,
    /// The random seed.
    pub seed: u64,
}

struct Planned {
    client: usize,
    key: usize,
    call: u64,
    lin: u64,
    ret: u64,
    /// 0 get, 1 put, 2 append.
    f: u8,
    value: String,
    out: String,
}

/// Generates the history `plan` describes, with the key of the injected stale read if any.
pub fn kv_history(plan: KvPlan) -> (Vec<Op>, Option<String>) {
    let mut rng = StdRng::seed_from_u64(plan.seed);
    let mut ops: Vec<Planned> = Vec::new();
    for client in 0..plan.clients {
        let mut t = rng.gen_range(0..20u64);
        for seq in 0..plan.ops_per_client {
            let call = t;
            let lin = call + rng.gen_range(1..40);
            let ret = lin + rng.gen_range(1..40);
            let f = match rng.gen_range(0..100) {
                0..=44 => 0,
                45..=49 => 1,
                _ => 2,
            };
            ops.push(Planned {
                client,
                key: rng.gen_range(0..plan.keys),
                call,
                lin,
                ret,
                f,
                value: format!("x {client} {seq} y"),
                out: String::new(),
            });
            t = ret + rng.gen_range(0..10);
        }
    }
    let mut by_lin: Vec<usize> = (0..ops.len()).collect();
    by_lin.sort_by_key(|&i| (ops[i].lin, i));
    // Every value each key took, with the instant it stopped being current.
    let mut values: Vec<String> = vec![String::new(); plan.keys];
    let mut past: Vec<Vec<(String, u64)>> = vec![Vec::new(); plan.keys];
    for &i in &by_lin {
        let op = &mut ops[i];
        let current = &mut values[op.key];
        match op.f {
            0 => op.out = current.clone(),
            f => {
                past[op.key].push((current.clone(), op.ret));
                if f == 1 {
                    *current = op.value.clone();
                } else {
                    current.push_str(&op.value);
                }
            }
        }
    }
    let mut stale_key = None;
    if plan.violation {
        // A get in the second half that returns a value overwritten by a write that had
        // returned before the get was called: values never repeat, so no order explains it.
        let mut gets: Vec<usize> = (ops.len() / 2..ops.len())
            .filter(|&i| ops[i].f == 0)
            .collect();
        gets.sort_by_key(|&i| ops[i].call);
        for i in gets {
            let old = past[ops[i].key]
                .iter()
                .rev()
                .find(|(v, ended)| *ended < ops[i].call && *v != ops[i].out);
            if let Some((v, _)) = old {
                ops[i].out = v.clone();
                stale_key = Some(ops[i].key.to_string());
                break;
            }
        }
    }
    (layout(&ops), stale_key)
}

/// The ops' calls and returns in time order, as a history.
fn layout(ops: &[Planned]) -> Vec<Op> {
    let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(ops.len() * 2);
    for (i, p) in ops.iter().enumerate() {
        events.push((p.call, 1, i));
        events.push((p.ret, 0, i));
    }
    events.sort_unstable();
    let names = ["get", "put", "append"];
    events
        .iter()
        .enumerate()
        .map(|(index, &(time, is_call, i))| {
            let p = &ops[i];
            let value: Value = match (p.f, is_call) {
                (0, 1) => Value::Null,
                (0, _) => json!(p.out),
                _ => json!(p.value),
            };
            let kind = if is_call == 1 {
                OpType::Invoke
            } else {
                OpType::Ok
            };
            let mut op = Op::new(
                Process::Client(p.client as u64),
                kind,
                F::from(names[p.f as usize].to_string()),
                Some(p.key.to_string()),
                value,
            );
            op.index = index as u64;
            op.time = time;
            op
        })
        .collect()
}
