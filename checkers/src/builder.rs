//! Builds small histories by hand, for tests and examples.

use crate::op::{Op, OpType, Process, F};
use serde_json::{json, Value};

/// Appends ops with consecutive indices and times, on one key unless told otherwise.
pub struct HistoryBuilder {
    ops: Vec<Op>,
    key: String,
}

impl HistoryBuilder {
    /// An empty history whose ops act on `key`.
    pub fn on(key: &str) -> Self {
        HistoryBuilder {
            ops: Vec::new(),
            key: key.to_string(),
        }
    }

    /// The last op appended, to set optional fields on it.
    pub fn last_mut(&mut self) -> Option<&mut Op> {
        self.ops.last_mut()
    }

    /// Switches the key later ops act on.
    pub fn key(&mut self, key: &str) -> &mut Self {
        self.key = key.to_string();
        self
    }

    /// Appends an op of client `process`; returns its index.
    pub fn push(&mut self, process: u64, kind: OpType, f: F, value: Value) -> u64 {
        let index = self.ops.len() as u64;
        let mut op = Op::new(
            Process::Client(process),
            kind,
            f,
            Some(self.key.clone()),
            value,
        );
        op.index = index;
        op.time = index * 1_000_000;
        self.ops.push(op);
        index
    }

    /// Invokes `add(delta)` on `process`.
    pub fn add(&mut self, process: u64, delta: i64) -> u64 {
        self.push(process, OpType::Invoke, F::Add, json!(delta))
    }

    /// Invokes a retry of the add invoked at `retry_of`.
    pub fn retry(&mut self, process: u64, delta: i64, retry_of: u64) -> u64 {
        let index = self.add(process, delta);
        self.ops[index as usize].retry_of = Some(retry_of);
        index
    }

    /// Completes `process`'s add of `delta` with `kind`.
    pub fn added(&mut self, process: u64, delta: i64, kind: OpType) -> u64 {
        self.push(process, kind, F::Add, json!(delta))
    }

    /// Invokes a read on `process`.
    pub fn read(&mut self, process: u64) -> u64 {
        self.push(process, OpType::Invoke, F::Read, Value::Null)
    }

    /// Completes `process`'s read ok with `value`.
    pub fn read_ok(&mut self, process: u64, value: i64) -> u64 {
        self.push(process, OpType::Ok, F::Read, json!(value))
    }

    /// Invokes and completes a delete on `process`.
    pub fn delete(&mut self, process: u64) -> u64 {
        self.push(process, OpType::Invoke, F::Delete, Value::Null);
        self.push(process, OpType::Ok, F::Delete, Value::Null)
    }

    /// The ops so far.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
}
