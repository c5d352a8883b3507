//! A group's long partitions searched without holding them: the generic search pulls their
//! ops from the spill files a chunk at a time and holds a window of them (`search::window`),
//! so a soak's hottest counter costs the same memory at any length. A partition the window
//! finds no order for is searched again held whole, which explains its failure.

use super::stream::{OpStream, Plan};
use super::Spill;
use crate::ideal::Count;
use crate::linear::search::{Source, Windowed};
use crate::linear::Model;
use crate::linear::{search_windowed, LinOptions, LinResult, Shared};
use std::time::Instant;

impl Spill {
    /// Searches the partitions of a group of spill files: the long ones whose ops the
    /// counter's sweep cannot take (they delete) windowed, one after the other, then the
    /// others held, as `build` reads them back.
    pub(super) fn search_group(
        &self,
        files: &[usize],
        init: Count,
        options: &LinOptions,
        deadline: Option<Instant>,
        shared: &Shared,
    ) -> std::io::Result<LinResult> {
        let mut result = LinResult::default();
        let plan = self.plan(files, init, options.reading)?;
        let mut leave_out = Vec::new();
        if let Some(plan) = &plan {
            leave_out = self.long(plan, options);
            for counters in self.long_partitions(plan, options) {
                let part =
                    self.search_long(files, plan, counters, init, options, deadline, shared)?;
                result.absorb(part);
            }
        }
        let (model, parts) = self.build(files, init, options, &leave_out, plan.as_ref())?;
        result.absorb(self.search(files, &model, parts, options, deadline, shared));
        Ok(result)
    }

    /// The counters (by number) of a group's long partitions, searched windowed.
    pub(super) fn long(&self, plan: &Plan, options: &LinOptions) -> Vec<bool> {
        let mut long = vec![false; self.names.len() + 1];
        for counters in self.long_partitions(plan, options) {
            for (out, &c) in long.iter_mut().zip(&counters) {
                *out |= c;
            }
        }
        long
    }

    /// A group's long partitions (each as its counters, by number): those with at least
    /// `window.from` attempts whose ops the sweep cannot take (they delete; with `generic`,
    /// any).
    fn long_partitions(&self, plan: &Plan, options: &LinOptions) -> Vec<Vec<bool>> {
        plan.long(&self.names, options.window.from, |deletes| {
            deletes || options.generic
        })
    }

    /// Searches the partition of counters `counters` (by number) windowed; held whole
    /// when the window finds no order (or its stream cannot be read so).
    #[allow(clippy::too_many_arguments)] // one group's search, as `search_group` has it
    fn search_long(
        &self,
        files: &[usize],
        plan: &Plan,
        counters: Vec<bool>,
        init: Count,
        options: &LinOptions,
        deadline: Option<Instant>,
        shared: &Shared,
    ) -> std::io::Result<LinResult> {
        let first = counters.iter().position(|&c| c);
        let key = first
            .and_then(|c| self.names.get(c))
            .map(|n| plan.model.partition_of(n));
        let start = plan.model.init(key.as_deref());
        let spilled = self.spilled(files);
        let mut stream = OpStream::open(&spilled, plan, &self.names, counters)?;
        let found = search_windowed(&plan.model, start, &mut stream, options, deadline, shared);
        // Unanswered, the rest is only counted.
        let counted = match found {
            Ok(Windowed::Unknown(_) | Windowed::NotSearched) => drain(&mut stream).is_ok(),
            _ => true,
        };
        let mut result = LinResult {
            keys: usize::from(stream.handed > 0),
            ops: stream.handed,
            ..LinResult::default()
        };
        match found {
            Ok(Windowed::Linearizable) => {}
            Ok(Windowed::Unknown(reason)) if counted => {
                result.unknown_keys = result.keys;
                result.reason = Some(reason.to_string());
            }
            Ok(Windowed::NotSearched) if counted => result.not_searched_keys = result.keys,
            _ => {
                // Held whole: the group but the partition's key is left out.
                drop(stream);
                let key_of = |c: usize| self.names.get(c).map(|n| plan.model.partition_of(n));
                let others: Vec<bool> = (0..=self.names.len()).map(|c| key_of(c) != key).collect();
                let (model, parts) = self.build(files, init, options, &others, Some(plan))?;
                return Ok(self.search(files, &model, parts, options, deadline, shared));
            }
        }
        result.valid = result.verdict();
        Ok(result)
    }
}

/// Reads the rest of a stream, counting its ops.
fn drain(stream: &mut OpStream) -> std::io::Result<()> {
    let mut rest = Vec::new();
    while stream.fill(1 << 16, &mut rest)? {
        rest.clear();
    }
    Ok(())
}
