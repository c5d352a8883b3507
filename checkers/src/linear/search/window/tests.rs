use super::*;
use crate::linear::models::{CounterInput, CounterModel};
use crate::linear::search::{search_alone, with_own_limits};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Ops handed out a few at a time, in call order.
struct Pieces<'a> {
    ops: std::slice::Iter<'a, LinOp<CounterInput>>,
    step: usize,
}

impl Source<CounterInput> for Pieces<'_> {
    fn fill(&mut self, want: usize, out: &mut Vec<LinOp<CounterInput>>) -> std::io::Result<bool> {
        out.extend(self.ops.by_ref().take(want.min(self.step)).cloned());
        Ok(self.ops.len() > 0)
    }
}

/// An op in flight: its input, its call, whether it has taken effect, what it read.
type Flight = (CounterInput, u64, bool, Option<i128>);

/// A counter's history, linearizable by construction: `clients` clients add (±1, 2),
/// delete and read, each op taking effect at a random point between its call and return; 5%
/// of changes end unknown (taking effect or not). A read is off by one with probability `lie`.
fn history(seed: u64, len: usize, clients: usize, lie: f64) -> Vec<LinOp<CounterInput>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut flight: Vec<Option<Flight>> = vec![None; clients];
    let mut value: Option<i128> = None;
    let mut done: Vec<(u64, LinOp<CounterInput>)> = Vec::new();
    let mut time = 0u64;
    while done.len() < len {
        time += 1;
        let c = rng.gen_range(0..clients);
        match flight[c].take() {
            None => {
                let input = match rng.gen_range(0..10) {
                    0..=4 => CounterInput::Add(0, [1, 1, -1, 2][rng.gen_range(0..4)]),
                    5 => CounterInput::Delete(Some(0)),
                    _ => CounterInput::Read(0, None),
                };
                flight[c] = Some((input, time, false, None));
            }
            Some((input, call, false, _)) => {
                // Takes effect now.
                let read = match input {
                    CounterInput::Add(_, d) => {
                        value = Some(value.unwrap_or(0) + i128::from(d));
                        None
                    }
                    CounterInput::Delete(_) => {
                        value = None;
                        None
                    }
                    CounterInput::Read(..) => value,
                };
                flight[c] = Some((input, call, true, read));
            }
            Some((input, call, true, read)) => {
                let unknown = !matches!(input, CounterInput::Read(..)) && rng.gen_bool(0.05);
                let input = match input {
                    CounterInput::Read(k, _) => {
                        let off = rng.gen_bool(lie);
                        let read = match (off, read) {
                            (true, Some(v)) => Some(v + 1),
                            (true, None) => Some(1),
                            (false, read) => read,
                        };
                        CounterInput::Read(k, read.map(|v| v as i64))
                    }
                    other => other,
                };
                let ret = (!unknown).then_some(time);
                done.push((call, LinOp::new(input, call, ret, None)));
            }
        }
    }
    // Changes still in flight end unknown: one may have taken effect already.
    for (input, call, _, _) in flight.into_iter().flatten() {
        if !matches!(input, CounterInput::Read(..)) {
            done.push((call, LinOp::new(input, call, None, None)));
        }
    }
    done.sort_by_key(|(call, _)| *call);
    done.into_iter().map(|(_, op)| op).collect()
}

fn windowed(ops: &[LinOp<CounterInput>], window: Window, step: usize) -> Windowed {
    let model = CounterModel::default();
    let mut source = Pieces {
        ops: ops.iter(),
        step,
    };
    with_own_limits(None, usize::MAX, |limits| {
        let limits = Limits {
            generic: true,
            ..*limits
        };
        search_windowed(&model, model.init(None), &mut source, &limits, window)
    })
    .expect("no input error")
}

fn whole(ops: &[LinOp<CounterInput>]) -> Verdict {
    let model = CounterModel::default();
    search_alone(&model, model.init(None), ops, None, usize::MAX)
}

#[test]
fn a_window_as_long_as_the_history_answers_as_the_whole_search() {
    let (mut valid, mut invalid) = (0, 0);
    for seed in 0..300 {
        let ops = history(seed, 40, 3, if seed % 2 == 1 { 0.1 } else { 0.0 });
        let window = Window {
            chunk: 1 + seed as usize % 7,
            margin: 1000,
            ..Window::default()
        };
        let answer = windowed(&ops, window, 1 + seed as usize % 3);
        match whole(&ops) {
            Verdict::Linearizable => {
                valid += 1;
                assert_eq!(answer, Windowed::Linearizable, "seed {seed}");
            }
            Verdict::NotLinearizable { .. } => {
                invalid += 1;
                assert_eq!(answer, Windowed::Whole, "seed {seed}");
            }
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    assert!(
        valid > 100 && invalid > 30,
        "{valid} valid, {invalid} invalid"
    );
}

#[test]
fn a_small_window_finds_witnesses_and_never_a_false_one() {
    let (mut witnessed, mut refuted) = (0, 0);
    for seed in 0..300 {
        let ops = history(seed, 300, 4, if seed % 3 == 0 { 0.02 } else { 0.0 });
        let window = Window {
            chunk: 8 + seed as usize % 13,
            margin: 16 + seed as usize % 17,
            ..Window::default()
        };
        let answer = windowed(&ops, window, 5);
        let verdict = whole(&ops);
        refuted += usize::from(matches!(verdict, Verdict::NotLinearizable { .. }));
        if answer == Windowed::Linearizable {
            witnessed += 1;
            assert_eq!(
                verdict,
                Verdict::Linearizable,
                "seed {seed}: a false witness"
            );
        } else {
            assert_eq!(answer, Windowed::Whole, "seed {seed}");
        }
        if seed % 3 != 0 {
            assert_eq!(
                verdict,
                Verdict::Linearizable,
                "seed {seed}: by construction"
            );
        }
    }
    // Two in three are linearizable by construction; a margin of 16 frames or more backs up
    // far enough for nearly all of them.
    assert!(witnessed > 150, "{witnessed} witnesses");
    assert!(
        refuted > 30,
        "{refuted} histories with a wrong read refuted"
    );
}
