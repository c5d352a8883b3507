//! From a history to the search's input: invokes paired with completions, retries joined to
//! the op they retry, and the ops grouped by partition.

use super::model::{Model, ModelError};
use super::partition::{LinOp, Partition};
use crate::op::{Op, OpType, Process};
use std::collections::{BTreeMap, HashMap};

/// One intended operation: its first invoke and how its attempts (the op and its retries,
/// `retry_of`) ended. Together they take effect at most once.
struct Intent<'a> {
    call: &'a Op,
    /// The first ok completion of any attempt.
    ok: Option<&'a Op>,
    /// Whether some attempt may have taken effect without saying so (info, never completed).
    maybe: bool,
    /// The last info completion of an attempt.
    info: Option<&'a Op>,
}

/// Pairs every client invoke with its completion, joins retries to the op they retry, and
/// groups the ops by partition. An op whose every attempt failed is left out (it did not
/// happen); one that succeeded returns at its first ok completion; otherwise its outcome is
/// unknown.
pub fn partitions<M: Model>(
    model: &M,
    history: &[Op],
) -> Result<Vec<Partition<M::Input>>, ModelError> {
    let mut intents: Vec<Intent> = Vec::new();
    let mut intent_of: HashMap<u64, usize> = HashMap::new();
    let mut open: HashMap<&Process, (u64, usize)> = HashMap::new();
    for op in history.iter().filter(|op| op.process.is_client()) {
        if op.kind == OpType::Invoke {
            let intent = match op.retry_of.and_then(|r| intent_of.get(&r)) {
                Some(&i) => i,
                None => {
                    intents.push(Intent {
                        call: op,
                        ok: None,
                        maybe: false,
                        info: None,
                    });
                    intents.len() - 1
                }
            };
            intent_of.insert(op.index, intent);
            if let Some((previous, _)) = open.insert(&op.process, (op.index, intent)) {
                return Err(ModelError {
                    index: op.index,
                    message: format!(
                        "process {} invoked again before its op at index {previous} completed",
                        op.process
                    ),
                });
            }
            continue;
        }
        let Some((_, i)) = open.remove(&op.process) else {
            continue;
        };
        match op.kind {
            OpType::Ok => {
                intents[i].ok.get_or_insert(op);
            }
            OpType::Info => {
                intents[i].maybe = true;
                intents[i].info = Some(op);
            }
            OpType::Fail | OpType::Invoke => {}
        }
    }
    for (_, i) in open.into_values() {
        intents[i].maybe = true;
    }
    let mut groups: BTreeMap<Option<String>, Vec<LinOp<M::Input>>> = BTreeMap::new();
    for intent in intents.iter().filter(|i| i.ok.is_some() || i.maybe) {
        if let Some(input) = model.input(intent.call, intent.ok)? {
            groups
                .entry(model.partition(intent.call))
                .or_default()
                .push(LinOp::new(
                    input,
                    intent.call.index,
                    intent.ok.map(|r| r.index),
                    intent.info.filter(|_| intent.ok.is_none()).map(|i| i.index),
                ));
        }
    }
    Ok(groups
        .into_iter()
        .map(|(key, ops)| Partition { key, ops })
        .collect())
}
