//! The counter model on generated ideal-counter histories: linearizable by construction,
//! or with one read past every sum the adds could make, which is refuted at once and is its
//! own core.

use checkers::linear::{check, LinOptions, ModelKind, Val};
use checkers::{OpType, Validity, F};

#[path = "../benches/support/counter_histories.rs"]
mod counter_histories;
use counter_histories::{counter_history, CounterPlan};

fn plan(seed: u64, bad_read: bool) -> CounterPlan {
    with_clients(5, seed, bad_read)
}

fn with_clients(clients: usize, seed: u64, bad_read: bool) -> CounterPlan {
    CounterPlan {
        clients,
        keys: 3,
        ops: 1_500,
        unknown: 0.05,
        failed: 0.05,
        bad_read,
        seed,
    }
}

fn options() -> LinOptions {
    LinOptions {
        init: Val::Int(0),
        ..LinOptions::default()
    }
}

#[test]
fn ideal_counter_histories_are_linearizable() {
    for seed in 1..=4 {
        let result = check(
            ModelKind::Counter,
            &counter_history(plan(seed, false)),
            &options(),
        )
        .expect("ops");
        assert_eq!(result.valid, Validity::Valid, "seed {seed}: {result:?}");
    }
}

/// With many clients many adds and reads are open at once: the sweep still finds a witness,
/// and the generic search agrees where it finishes.
#[test]
fn busy_ideal_counter_histories_are_linearizable_for_the_sweep_and_the_generic_search() {
    for (clients, seed) in [(20, 5), (50, 6)] {
        let history = counter_history(with_clients(clients, seed, false));
        let sweep = check(ModelKind::Counter, &history, &options()).expect("ops");
        assert_eq!(sweep.valid, Validity::Valid, "{clients} clients: {sweep:?}");
        let generic = LinOptions {
            generic: true,
            time_limit: Some(std::time::Duration::from_secs(20)),
            ..options()
        };
        let generic = check(ModelKind::Counter, &history, &generic).expect("ops");
        assert_ne!(generic.valid, Validity::Invalid, "{clients} clients");
    }
}

/// A search that keeps few configurations fails now and then on a busy key (50 clients on
/// 4 keys); it goes back and widens, and still finds the witness: the generic search could
/// not answer these in a test's time.
#[test]
fn busy_keys_are_linearizable_where_the_search_has_to_go_back() {
    for seed in [7, 8] {
        let plan = CounterPlan {
            keys: 4,
            ops: 12_000,
            ..with_clients(50, seed, false)
        };
        // Past the sweep, the generic search would answer unknown at this limit.
        let options = LinOptions {
            time_limit: Some(std::time::Duration::from_secs(60)),
            ..options()
        };
        let result = check(ModelKind::Counter, &counter_history(plan), &options).expect("ops");
        assert_eq!(result.valid, Validity::Valid, "seed {seed}: {result:?}");
    }
}

#[test]
fn a_read_past_every_sum_is_not_and_is_its_own_core() {
    for seed in 1..=4 {
        let history = counter_history(plan(seed, true));
        let result = check(ModelKind::Counter, &history, &options()).expect("ops");
        assert_eq!(result.valid, Validity::Invalid, "seed {seed}");
        let failure = &result.failures[0];
        assert_eq!(failure.core.len(), 1, "seed {seed}: {failure:?}");
        assert!(failure.core_minimal);
        assert_eq!(failure.failing_op, Some(failure.core[0]));
        // The core is the bad read: it returned more than all the adds' deltas together.
        let at = history.iter().position(|op| op.index == failure.core[0]);
        let invoke = &history[at.expect("the core op is in the history")];
        let done = history
            .iter()
            .find(|op| op.index > invoke.index && op.process == invoke.process)
            .expect("it completed");
        let all_adds: i64 = history
            .iter()
            .filter(|op| op.kind == OpType::Invoke && op.f == F::Add)
            .filter_map(|op| op.value.as_i64())
            .map(i64::abs)
            .sum();
        assert_eq!(invoke.f, F::Read, "seed {seed}");
        assert_eq!(done.value.as_i64(), Some(all_adds + 1), "seed {seed}");
        assert!(failure
            .because
            .starts_with("This op cannot take effect on its own"));
    }
}
