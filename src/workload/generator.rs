//! The seeded generator: the same seed gives every client the same sequence of ops.

use super::spec::Workload;
use crate::node::api::{CounterKey, KeyError};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One op a client is to perform, before it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// Add `delta` to `key` through node number `node`.
    Add {
        /// The counter.
        key: CounterKey,
        /// The delta.
        delta: i64,
        /// Index of the node to send it to.
        node: usize,
    },
    /// Read `key` through node number `node`.
    Read {
        /// The counter.
        key: CounterKey,
        /// Index of the node to send it to.
        node: usize,
    },
}

/// One client's stream of ops, derived from the run's seed and the client's number.
pub struct Generator {
    rng: StdRng,
    workload: Workload,
    keys: Vec<CounterKey>,
}

impl Generator {
    /// The generator of client `client` in a run seeded with `seed`.
    pub fn new(workload: &Workload, seed: u64, client: u64) -> Result<Self, KeyError> {
        let stream = seed ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Ok(Generator {
            rng: StdRng::seed_from_u64(stream),
            workload: workload.clone(),
            keys: workload
                .keys
                .iter()
                .map(|k| k.parse())
                .collect::<Result<_, _>>()?,
        })
    }

    /// The next op.
    pub fn next_op(&mut self) -> Planned {
        let w = &self.workload;
        let key = self.keys[self.rng.gen_range(0..self.keys.len())].clone();
        let node = self.rng.gen_range(0..w.nodes);
        if self.rng.gen_bool(w.add_share) {
            let delta = w.deltas[self.rng.gen_range(0..w.deltas.len())];
            Planned::Add { key, delta, node }
        } else {
            Planned::Read { key, node }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(seed: u64, client: u64) -> Vec<Planned> {
        let workload = Workload {
            keys: vec!["a/x".into(), "a/y".into()],
            deltas: vec![1, -1, 5],
            ..Workload::default()
        };
        let mut generator = Generator::new(&workload, seed, client).expect("valid keys");
        (0..50).map(|_| generator.next_op()).collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_ops() {
        assert_eq!(ops(42, 3), ops(42, 3));
    }

    #[test]
    fn seeds_and_clients_give_different_ops() {
        assert_ne!(ops(42, 3), ops(43, 3));
        assert_ne!(ops(42, 3), ops(42, 4));
    }
}
