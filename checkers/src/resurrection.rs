//! Resurrections: reads that brought back counts a definitely completed delete had removed.
//!
//! The counter checker decides which reads are resurrections (see `counter`); this module
//! groups them: reads of the same counter after the same delete form one event.

use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many events results.json lists.
const EVENTS_KEPT: usize = 100;

/// One counter that came back after one delete.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResurrectionEvent {
    /// The counter.
    pub key: String,
    /// Index of the delete's invoke.
    pub delete: u64,
    /// The most that delete and the earlier ones remembered (up to 8) could have removed.
    pub deleted_count: i64,
    /// Index of the first read that saw it back.
    pub first_read: u64,
    /// Index of the last such read.
    pub last_read: u64,
    /// Time of the first such read, ns.
    pub first_time: u64,
    /// Reads that saw it back.
    pub reads: u64,
    /// The nodes that served those reads.
    pub nodes: Vec<String>,
    /// The most of the pre-delete count one read brought back.
    pub magnitude: i64,
}

/// The resurrection checker's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResurrectionResult {
    /// Invalid when any counter came back.
    pub valid: Validity,
    /// Counter and delete pairs that came back.
    pub events: u64,
    /// Reads that saw a deleted count.
    pub reads: u64,
    /// The most one read brought back.
    #[serde(default)]
    pub max_magnitude: i64,
    /// The events, worst first (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<ResurrectionEvent>,
}

/// A read that brought back a deleted count: which counter, where and when.
#[derive(Debug, Clone, Copy)]
pub struct ResurrectedRead<'a> {
    /// The counter read.
    pub key: &'a str,
    /// Index of the read's ok completion.
    pub index: u64,
    /// Time of the completion, ns.
    pub time: u64,
    /// The node that answered.
    pub node: Option<&'a str>,
}

/// Groups resurrected reads into events. An event stays open until a later delete of its
/// counter starts another; closed events keep only the worst 100, so memory stays
/// proportional to the counters.
#[derive(Debug, Default)]
pub struct Resurrections {
    open: BTreeMap<String, ResurrectionEvent>,
    closed: Vec<ResurrectionEvent>,
    events: u64,
    reads: u64,
    max_magnitude: i64,
}

impl Resurrections {
    /// Records that `read` brought back `magnitude` of the `deleted_count` the delete at
    /// index `delete` (and those before it) removed.
    pub fn record(
        &mut self,
        read: ResurrectedRead,
        delete: u64,
        deleted_count: i64,
        magnitude: i64,
    ) {
        self.reads += 1;
        self.max_magnitude = self.max_magnitude.max(magnitude);
        if self.open.get(read.key).is_some_and(|e| e.delete != delete) {
            if let Some(done) = self.open.remove(read.key) {
                self.close(done);
            }
        }
        let event = self
            .open
            .entry(read.key.to_string())
            .or_insert_with(|| ResurrectionEvent {
                key: read.key.to_string(),
                delete,
                deleted_count,
                first_read: read.index,
                last_read: read.index,
                first_time: read.time,
                ..ResurrectionEvent::default()
            });
        if event.reads == 0 {
            self.events += 1;
        }
        event.reads += 1;
        if read.index < event.first_read {
            event.first_read = read.index;
            event.first_time = read.time;
        }
        event.last_read = event.last_read.max(read.index);
        event.magnitude = event.magnitude.max(magnitude);
        if let Some(node) = read.node {
            if !event.nodes.iter().any(|n| n == node) {
                event.nodes.push(node.to_string());
                event.nodes.sort();
            }
        }
    }

    fn close(&mut self, event: ResurrectionEvent) {
        self.closed.push(event);
        if self.closed.len() >= 2 * EVENTS_KEPT {
            sort_worst_first(&mut self.closed);
            self.closed.truncate(EVENTS_KEPT);
        }
    }

    /// The verdict and the events, worst first.
    pub fn finish(mut self) -> ResurrectionResult {
        let open = std::mem::take(&mut self.open);
        open.into_values().for_each(|event| self.close(event));
        let mut list = self.closed;
        sort_worst_first(&mut list);
        list.truncate(EVENTS_KEPT);
        ResurrectionResult {
            valid: Validity::from_findings(self.events > 0, false),
            events: self.events,
            reads: self.reads,
            max_magnitude: self.max_magnitude,
            list,
        }
    }
}

fn sort_worst_first(events: &mut [ResurrectionEvent]) {
    events.sort_by_key(|e| (std::cmp::Reverse(e.magnitude), e.first_read));
}
