//! The rate a run achieved, shown beside the one its workload asked for: client ops invoked
//! per second, from the first invoke to the last.

use checkers::{Op, OpType};

/// Client ops invoked per second from the first client invoke to the last (retries, which
/// the pacer does not pace, final reads, the baseline and the nemesis apart); none with
/// fewer than two invokes.
pub fn achieved(history: &[Op]) -> Option<f64> {
    let mut invokes = history
        .iter()
        .filter(|op| op.kind == OpType::Invoke && op.process.is_load() && op.retry_of.is_none())
        .map(|op| op.time);
    let first = invokes.next()?;
    let (count, last) = invokes.fold((1u64, first), |(n, _), t| (n + 1, t));
    let seconds = last.saturating_sub(first) as f64 / 1e9;
    (count > 1 && seconds > 0.0).then(|| count as f64 / seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::{Process, F};
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
        history.push(invoke(checkers::op::FINAL_READERS, 9 * second));
        let mut retry = invoke(1, 9 * second);
        retry.retry_of = Some(0);
        history.push(retry);
        // 11 invokes over 2 s.
        assert_eq!(achieved(&history), Some(5.5));
        assert_eq!(achieved(&history[..1]), None);
    }
}
