//! A spilled op: one attempt of a client op (its invoke and how it ended) in 56 bytes.

use crate::ideal::Count;
use crate::op::F;
use serde_json::Value;

/// Bytes of one record.
pub const RECORD: usize = 56;
/// No index (an op that never completed, or is no retry).
pub const NONE: u64 = u64::MAX;

/// The counter number of an op with no key.
pub const NO_KEY: u32 = u32::MAX;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Ok = 0,
    Fail = 1,
    Info = 2,
    Open = 3,
}

/// One attempt of a client op: its invoke and how it ended, in 56 bytes.
#[derive(Debug, Clone, Copy)]
pub struct Record {
    pub call: u64,
    /// Index of the completion (`NONE`: never completed).
    pub ret: u64,
    pub retry_of: u64,
    /// An add's delta; the count an ok read returned.
    pub value: i64,
    pub process: u64,
    pub key: u32,
    pub f: u8,
    pub end: End,
    /// An ok read that returned `null`.
    pub null: bool,
    /// The spill's low mark when the record was written (`Frontier::low`): every record
    /// written after it belongs to an intended op first called at this index or later.
    pub low: u64,
}

impl Record {
    /// The record's bytes.
    pub fn encode(&self) -> [u8; RECORD] {
        let mut out = [0; RECORD];
        out[0..8].copy_from_slice(&self.call.to_le_bytes());
        out[8..16].copy_from_slice(&self.ret.to_le_bytes());
        out[16..24].copy_from_slice(&self.retry_of.to_le_bytes());
        out[24..32].copy_from_slice(&self.value.to_le_bytes());
        out[32..40].copy_from_slice(&self.process.to_le_bytes());
        out[40..44].copy_from_slice(&self.key.to_le_bytes());
        out[44] = self.f;
        out[45] = self.end as u8;
        out[46] = self.null as u8;
        out[48..56].copy_from_slice(&self.low.to_le_bytes());
        out
    }

    /// A record from its bytes.
    pub fn decode(b: &[u8; RECORD]) -> Self {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Record {
            call: u64_at(0),
            ret: u64_at(8),
            retry_of: u64_at(16),
            value: u64_at(24) as i64,
            process: u64_at(32),
            key: u32::from_le_bytes(b[40..44].try_into().unwrap_or_default()),
            f: b[44],
            end: match b[45] {
                0 => End::Ok,
                1 => End::Fail,
                2 => End::Info,
                _ => End::Open,
            },
            null: b[46] != 0,
            low: u64_at(48),
        }
    }

    /// The counter function.
    pub fn f(&self) -> F {
        match self.f {
            0 => F::Add,
            1 => F::Delete,
            2 => F::Read,
            _ => F::Scan,
        }
    }

    /// The op as a history usually says it: the invoke's value (an add's delta, else
    /// `null`) and, when ok, the completion's (what a read returned, else the invoke's).
    pub fn described(&self) -> (Value, Option<Value>) {
        let value = match self.f() {
            F::Add => Value::from(self.value),
            _ => Value::Null,
        };
        let returned = match (self.end, self.returned()) {
            (End::Ok, Some(count)) => Some(count.map_or(Value::Null, Value::from)),
            (End::Ok, None) => Some(value.clone()),
            _ => None,
        };
        (value, returned)
    }

    /// What an ok read returned; `None` for anything else.
    pub fn returned(&self) -> Option<Count> {
        (self.f == 2 && self.end == End::Ok).then(|| (!self.null).then_some(self.value))
    }
}

/// The code of a counter function in a record; `None` for any other.
pub fn f_code(f: &F) -> Option<u8> {
    match f {
        F::Add => Some(0),
        F::Delete => Some(1),
        F::Read => Some(2),
        F::Scan => Some(3),
        F::Other(_) => None,
    }
}
