//! The rate a run achieved, shown beside the one its workload asked for: client ops invoked
//! per second, from the first invoke to the last.

use checkers::{Op, OpType};

/// When a run's load invoked its ops, as they go by: the first and last time and how many
/// (retries, which the pacer does not pace, final reads, the baseline and the nemesis
/// apart).
#[derive(Debug, Default, Clone, Copy)]
pub struct Invokes {
    first: Option<u64>,
    last: u64,
    count: u64,
}

impl Invokes {
    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        if op.kind != OpType::Invoke || !op.process.is_load() || op.retry_of.is_some() {
            return;
        }
        self.first.get_or_insert(op.time);
        self.last = op.time;
        self.count += 1;
    }

    /// The rate the load invoked ops at, ops/s, from its first invoke to its last; `None`
    /// with fewer than two invokes or no time between them.
    pub fn achieved(&self) -> Option<f64> {
        let seconds = self.last.saturating_sub(self.first?) as f64 / 1e9;
        (self.count > 1 && seconds > 0.0).then(|| self.count as f64 / seconds)
    }
}

/// The rate `history`'s load invoked its ops at (see [`Invokes::achieved`]).
#[cfg(test)]
fn achieved(history: &[Op]) -> Option<f64> {
    let mut invokes = Invokes::default();
    history.iter().for_each(|op| invokes.observe(op));
    invokes.achieved()
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
