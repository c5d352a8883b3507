//! What every reader holds a history to, whatever its format: lines of bounded length,
//! completions that pair with invokes, at least one operation. A history that breaks them
//! is an error naming its line; `lenient` turns the pairing rules into warnings and skips
//! the line, `allow_empty` accepts a history with no operations.

use super::HistoryError;
use crate::op::{Op, OpType, Process};
use rustc_hash::FxHashSet;
use std::path::Path;

/// Ops each with the line it starts on, and what the reader tolerated.
pub type LinedOps = (Vec<(u64, Op)>, Vec<String>);

/// The longest line a reader takes by default: 1 MiB.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What the readers tolerate (`check` and `lin` take the same switches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// A history with no operations is accepted (and checks as valid).
    pub allow_empty: bool,
    /// A completion without an invoke, or a second invoke from a busy process, is a
    /// warning and the line is skipped, rather than an error.
    pub lenient: bool,
    /// A longer line is an error.
    pub max_line_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            allow_empty: false,
            lenient: false,
            max_line_bytes: MAX_LINE_BYTES,
        }
    }
}

/// What to do with one op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// Take it.
    Keep,
    /// Skip it, with this warning (lenient only).
    Skip(String),
    /// The history is malformed here.
    Reject(String),
}

/// Pairs completions with invokes as a history streams by, per client process.
#[derive(Debug, Default)]
pub struct Pairing {
    options: ReadOptions,
    open: FxHashSet<Process>,
    client_ops: u64,
}

impl Pairing {
    /// A pairing that applies `options`.
    pub fn new(options: ReadOptions) -> Self {
        Pairing {
            options,
            ..Pairing::default()
        }
    }

    /// Whether `op` fits the history so far (nemesis and other named actors always do).
    pub fn admit(&mut self, op: &Op) -> Admit {
        if !op.process.is_client() {
            return Admit::Keep;
        }
        let problem = match op.kind {
            OpType::Invoke if self.open.contains(&op.process) => format!(
                "process {} invoked again before its last op completed",
                op.process
            ),
            OpType::Invoke => {
                self.open.insert(op.process.clone());
                self.client_ops += 1;
                return Admit::Keep;
            }
            _ if self.open.remove(&op.process) => {
                self.client_ops += 1;
                return Admit::Keep;
            }
            kind => format!(
                "a `{}` completion of process {} with no invoke before it",
                kind.as_str(),
                op.process
            ),
        };
        if self.options.lenient {
            Admit::Skip(format!("{problem}; skipped (--lenient)"))
        } else {
            Admit::Reject(format!("{problem} (--lenient skips such lines)"))
        }
    }

    /// Why the history is not acceptable once it has ended, if it is not.
    pub fn finish(&self) -> Option<String> {
        (self.client_ops == 0 && !self.options.allow_empty).then(|| {
            "no operations: a history must hold at least one client operation (--allow-empty accepts it)"
                .to_string()
        })
    }

    /// Why a line of `bytes` bytes is too long, if it is.
    pub fn too_long(&self, bytes: usize) -> Option<String> {
        let max = self.options.max_line_bytes;
        (bytes > max).then(|| {
            format!("the line is longer than {max} bytes (--max-line-bytes raises the limit)")
        })
    }
}

/// Holds the op read at `line` of `path` to `pairing`: whether to keep it (a skipped op's
/// warning goes to `warnings`), or the error.
pub fn admit_at(
    pairing: &mut Pairing,
    op: &Op,
    (path, line): (&Path, u64),
    warnings: &mut Vec<String>,
) -> Result<bool, HistoryError> {
    match pairing.admit(op) {
        Admit::Keep => Ok(true),
        Admit::Skip(warning) => {
            warnings.push(format!("{}:{line}: {warning}", path.display()));
            Ok(false)
        }
        Admit::Reject(message) => Err(HistoryError::Malformed {
            path: path.to_path_buf(),
            line,
            message,
        }),
    }
}

/// The error for a history that ended without being acceptable, if it did.
pub fn finish_at(pairing: &Pairing, path: &Path) -> Result<(), HistoryError> {
    match pairing.finish() {
        Some(message) => Err(HistoryError::Unusable {
            path: path.to_path_buf(),
            message,
        }),
        None => Ok(()),
    }
}

/// The first line of `text` longer than the limit, as an error naming it.
pub fn long_line(pairing: &Pairing, text: &str, path: &Path) -> Result<(), HistoryError> {
    for (line, content) in (1..).zip(text.split('\n')) {
        if let Some(message) = pairing.too_long(content.trim_end_matches('\r').len()) {
            return Err(HistoryError::Malformed {
                path: path.to_path_buf(),
                line,
                message,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::F;
    use serde_json::Value;

    fn op(process: u64, kind: OpType) -> Op {
        Op::new(
            Process::Client(process),
            kind,
            F::Read,
            Some("a/b".into()),
            Value::Null,
        )
    }

    #[test]
    fn completions_pair_with_invokes_per_process() {
        let mut pairing = Pairing::new(ReadOptions::default());
        assert_eq!(pairing.admit(&op(1, OpType::Invoke)), Admit::Keep);
        assert_eq!(pairing.admit(&op(2, OpType::Invoke)), Admit::Keep);
        assert_eq!(pairing.admit(&op(1, OpType::Ok)), Admit::Keep);
        let Admit::Reject(orphan) = pairing.admit(&op(1, OpType::Fail)) else {
            panic!("an orphan completion is rejected");
        };
        assert!(orphan.contains("no invoke"), "{orphan}");
        let Admit::Reject(twice) = pairing.admit(&op(2, OpType::Invoke)) else {
            panic!("a second invoke is rejected");
        };
        assert!(twice.contains("invoked again"), "{twice}");
        assert_eq!(pairing.finish(), None);
    }

    #[test]
    fn lenient_skips_with_a_warning_and_empty_is_refused_unless_allowed() {
        let lenient = ReadOptions {
            lenient: true,
            ..ReadOptions::default()
        };
        let mut pairing = Pairing::new(lenient);
        assert!(matches!(pairing.admit(&op(1, OpType::Ok)), Admit::Skip(_)));
        assert!(pairing
            .finish()
            .is_some_and(|e| e.contains("no operations")));
        let allowed = ReadOptions {
            allow_empty: true,
            ..ReadOptions::default()
        };
        assert_eq!(Pairing::new(allowed).finish(), None);
        assert!(pairing.too_long(MAX_LINE_BYTES + 1).is_some());
        assert_eq!(pairing.too_long(MAX_LINE_BYTES), None);
    }
}
