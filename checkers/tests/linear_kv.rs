//! The kv model's reductions (hidden writes, unseen values, dead reads) against a brute-force
//! enumeration of every order, on small histories of gets, puts and appends whose values
//! overlap on purpose ("a", "b", "ab"), so a text can be seen by accident.

use crate::peer_histories::sub_history;
use checkers::linear::{check, LinOptions, ModelKind};
use checkers::{Op, OpType, Process, Validity, F};
use proptest::prelude::*;
use serde_json::{json, Value};

/// One kv op on key "k": `value` is the put or append text, or what a get returned.
#[derive(Debug, Clone)]
struct KvSpec {
    f: &'static str,
    value: &'static str,
    call: u64,
    /// `None`: the outcome is unknown (a get with an unknown outcome is left out).
    ret: Option<u64>,
}

fn history(specs: &[KvSpec]) -> Vec<Op> {
    let mut events: Vec<(u64, u8, usize)> = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        events.push((s.call * 2, 0, i));
        if let Some(r) = s.ret {
            events.push((r * 2 + 1, 1, i));
        }
    }
    events.sort();
    events
        .iter()
        .enumerate()
        .map(|(index, &(_, is_ret, i))| {
            let s = &specs[i];
            let value: Value = match (s.f, is_ret) {
                ("get", 0) => Value::Null,
                _ => json!(s.value),
            };
            let kind = if is_ret == 0 {
                OpType::Invoke
            } else {
                OpType::Ok
            };
            let mut op = Op::new(
                Process::Client(i as u64),
                kind,
                F::from(s.f.to_string()),
                Some("k".into()),
                value,
            );
            op.index = index as u64;
            op
        })
        .collect()
}

/// Whether some order of the ops, each after every op that returned before its call, with
/// unknown outcomes free to never happen, explains every get.
fn brute_force(specs: &[KvSpec]) -> bool {
    brute_force_from(specs, String::new())
}

fn brute_force_from(specs: &[KvSpec], init: String) -> bool {
    let live: Vec<&KvSpec> = specs
        .iter()
        .filter(|s| s.f != "get" || s.ret.is_some())
        .collect();
    explore(&live, &mut vec![false; live.len()], init)
}

/// Whether some initial value makes the ops linearizable: the first get an order reaches
/// sees the initial value followed by appends, so every prefix of a get's value is tried.
fn linearizable_from_some_value(specs: &[KvSpec]) -> bool {
    let mut inits = vec![String::new()];
    for s in specs.iter().filter(|s| s.f == "get") {
        inits.extend(
            s.value
                .char_indices()
                .map(|(i, _)| s.value[..i].to_string()),
        );
        inits.push(s.value.to_string());
    }
    inits.into_iter().any(|init| brute_force_from(specs, init))
}

fn explore(ops: &[&KvSpec], used: &mut [bool], state: String) -> bool {
    if (0..ops.len()).all(|i| used[i] || ops[i].ret.is_none()) {
        return true;
    }
    for i in 0..ops.len() {
        let blocked = (0..ops.len())
            .any(|j| !used[j] && j != i && ops[j].ret.is_some_and(|r| r < ops[i].call));
        if used[i] || blocked {
            continue;
        }
        let next = match ops[i].f {
            "get" if ops[i].value != state => continue,
            "get" => state.clone(),
            "put" => ops[i].value.to_string(),
            _ => format!("{state}{}", ops[i].value),
        };
        used[i] = true;
        if explore(ops, used, next) {
            return true;
        }
        used[i] = false;
    }
    false
}

fn random_spec() -> impl Strategy<Value = KvSpec> {
    const TEXTS: [&str; 6] = ["", "a", "b", "ab", "ba", "aab"];
    (0..10usize, 0..TEXTS.len(), 0u64..12, 1u64..6, 0u8..6).prop_map(
        |(f, text, call, len, outcome)| {
            let f = match f {
                0..=4 => "get",
                5 => "put",
                _ => "append",
            };
            KvSpec {
                f,
                value: if f == "get" {
                    TEXTS[text]
                } else {
                    TEXTS[text % 3]
                },
                call,
                ret: (outcome != 0).then_some(call + len),
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn kv_verdicts_equal_brute_force(specs in prop::collection::vec(random_spec(), 0..9)) {
        let expected = brute_force(&specs);
        let got = check(ModelKind::Kv, &history(&specs), &LinOptions::default())
            .expect("valid ops")
            .valid;
        prop_assert_eq!(got == Validity::Valid, expected, "{:?}", specs);
    }
}

#[test]
fn an_append_no_get_saw_still_ends_the_values_gets_can_see() {
    // append "a" [0,10] (seen by no get), get → "" [1,2], get → "" [11,12]: the append
    // must come before the second get, which then cannot see "".
    let specs = [
        KvSpec {
            f: "append",
            value: "a",
            call: 0,
            ret: Some(10),
        },
        KvSpec {
            f: "get",
            value: "",
            call: 1,
            ret: Some(2),
        },
        KvSpec {
            f: "get",
            value: "",
            call: 11,
            ret: Some(12),
        },
    ];
    let result = check(ModelKind::Kv, &history(&specs), &LinOptions::default()).expect("ops");
    assert_eq!(result.valid, Validity::Invalid);
    // With its outcome unknown the append may never have happened.
    let unknown = [
        KvSpec {
            ret: None,
            ..specs[0].clone()
        },
        specs[1].clone(),
        specs[2].clone(),
    ];
    let result = check(ModelKind::Kv, &history(&unknown), &LinOptions::default()).expect("ops");
    assert_eq!(result.valid, Validity::Valid);
}

#[path = "../benches/support/kv_histories.rs"]
mod kv_histories;

/// A history's ops as specs: each invoke with its completion (`value` leaked: tests only).
fn specs_of(history: &[Op]) -> Vec<KvSpec> {
    let mut specs = Vec::new();
    for (at, call) in history.iter().enumerate() {
        if call.kind != OpType::Invoke {
            continue;
        }
        let done = history[at + 1..]
            .iter()
            .find(|op| op.process == call.process);
        let value = match (call.f.as_str(), done) {
            ("get", Some(d)) => d.value.as_str(),
            _ => call.value.as_str(),
        };
        specs.push(KvSpec {
            f: match call.f.as_str() {
                "get" => "get",
                "put" => "put",
                _ => "append",
            },
            value: Box::leak(value.unwrap_or_default().to_string().into_boxed_str()),
            call: call.index,
            ret: done.filter(|d| d.kind == OpType::Ok).map(|d| d.index),
        });
    }
    specs
}

#[test]
fn a_generated_stale_read_has_a_core_that_fails_alone_and_needs_every_op() {
    for seed in 1..=6 {
        let plan = kv_histories::KvPlan {
            clients: 10,
            keys: 3,
            ops_per_client: 30,
            violation: true,
            seed,
        };
        let (history, stale_key) = kv_histories::kv_history(plan);
        let result = check(ModelKind::Kv, &history, &LinOptions::default()).expect("ops");
        assert_eq!(result.valid, Validity::Invalid, "seed {seed}");
        let failure = &result.failures[0];
        assert_eq!(failure.key, stale_key, "seed {seed}");
        assert!(failure.core_minimal, "seed {seed}");
        let core = specs_of(&sub_history(&history, &failure.core));
        assert_eq!(core.len(), failure.core.len());
        assert!(
            !linearizable_from_some_value(&core),
            "seed {seed}: {core:?}"
        );
        for i in 0..core.len() {
            let mut less = core.clone();
            less.remove(i);
            assert!(
                linearizable_from_some_value(&less),
                "seed {seed}: without {:?} still not linearizable: {less:?}",
                core[i]
            );
        }
    }
}

#[test]
fn a_core_from_any_initial_value_is_sought_only_where_none_explains_the_ops() {
    // append "b" [0,3], get → "ab" [1,2], get → "ab" [4,5]: not linearizable from "", but
    // from "a" it is (the append, then both gets), so the core must start from "". A read
    // forced first from "any value" would pin the value to "ab" and wrongly fail from any.
    let specs = [
        KvSpec {
            f: "append",
            value: "b",
            call: 0,
            ret: Some(3),
        },
        KvSpec {
            f: "get",
            value: "ab",
            call: 1,
            ret: Some(2),
        },
        KvSpec {
            f: "get",
            value: "ab",
            call: 4,
            ret: Some(5),
        },
    ];
    let result = check(ModelKind::Kv, &history(&specs), &LinOptions::default()).expect("ops");
    assert_eq!(result.valid, Validity::Invalid);
    let because = &result.failures[0].because;
    assert!(because.contains("starting from \"\""), "{because}");
}
