//! The rate a run achieved, shown beside the one its workload asked for: client ops invoked
//! per second, from the first invoke to the last.

use checkers::{Op, OpType, Process};

/// Client ops invoked per second from the first client invoke to the last (final reads and
/// the nemesis apart); none with fewer than two invokes.
pub fn achieved(history: &[Op]) -> Option<f64> {
    let mut invokes = history
        .iter()
        .filter(|op| op.kind == OpType::Invoke && is_load(&op.process))
        .map(|op| op.time);
    let first = invokes.next()?;
    let (count, last) = invokes.fold((1u64, first), |(n, _), t| (n + 1, t));
    let seconds = last.saturating_sub(first) as f64 / 1e9;
    (count > 1 && seconds > 0.0).then(|| count as f64 / seconds)
}

/// Whether `process` is one of the load's clients (final readers use 1,000,000,000 on).
fn is_load(process: &Process) -> bool {
    matches!(process, Process::Client(p) if *p < 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::F;
    use serde_json::Value;

    fn invoke(process: u64, time: u64) -> Op {
        let mut op = Op::new(
            Process::Client(process),
            OpType::Invoke,
            F::Add,
            Some("k/a".to_string()),
            Value::from(1),
        );
        op.time = time;
        op
    }

    #[test]
    fn invokes_per_second_of_load_leave_out_final_reads() {
        let second = 1_000_000_000;
        let mut history: Vec<Op> = (0..=10).map(|i| invoke(i % 3, i * second / 5)).collect();
        history.push(invoke(1_000_000_000, 9 * second));
        // 11 invokes over 2 s.
        assert_eq!(achieved(&history), Some(5.5));
        assert_eq!(achieved(&history[..1]), None);
    }
}
