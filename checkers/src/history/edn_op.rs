//! One operation from its EDN map: the fields Jepsen, Knossos and Porcupine histories use.

use super::edn::Edn;
use crate::op::{Op, OpType, Process, F};
use serde_json::Value;

/// The [`Op`] at position `index` that an EDN operation map describes; the error says
/// what is wrong, the caller adds where.
pub(super) fn op_from_edn(form: &Edn, index: u64) -> Result<Op, String> {
    if !matches!(form.untagged(), Edn::Map(_)) {
        return Err(format!(
            "expected an operation map, found {}",
            form.describe()
        ));
    }
    let required = |name: &str| {
        form.get(name)
            .ok_or_else(|| format!("the operation has no `:{name}`"))
    };
    Ok(Op {
        index,
        process: process(required("process")?)?,
        kind: op_type(required("type")?)?,
        f: function(required("f")?)?,
        time: form
            .get("time")
            .map(|t| natural(t, "time"))
            .transpose()?
            .unwrap_or(0),
        key: text(form.get("key"), "key")?,
        value: form.get("value").map_or(Value::Null, Edn::to_json),
        node: text(form.get("node"), "node")?,
        cl: text(form.get("cl"), "cl")?,
        error: form
            .get("error")
            .filter(|e| **e != Edn::Nil)
            .map(Edn::to_text),
        tombstones: form
            .get("tombstones")
            .map(|t| natural(t, "tombstones"))
            .transpose()?,
        retry_of: form
            .get("retry-of")
            .map(|r| natural(r, "retry-of"))
            .transpose()?,
    })
}

fn process(value: &Edn) -> Result<Process, String> {
    match value {
        Edn::Int(n) if *n >= 0 => Ok(Process::Client(n.unsigned_abs())),
        Edn::Keyword(name) | Edn::Str(name) => Ok(Process::Named(name.clone())),
        other => Err(format!(
            "`:process` must be a non-negative integer or a keyword, found {}",
            other.describe()
        )),
    }
}

fn op_type(value: &Edn) -> Result<OpType, String> {
    match value {
        Edn::Keyword(name) if name == "invoke" => Ok(OpType::Invoke),
        Edn::Keyword(name) if name == "ok" => Ok(OpType::Ok),
        Edn::Keyword(name) if name == "fail" => Ok(OpType::Fail),
        Edn::Keyword(name) if name == "info" => Ok(OpType::Info),
        other => Err(format!(
            "`:type` must be :invoke, :ok, :fail or :info, found {}",
            other.describe()
        )),
    }
}

fn function(value: &Edn) -> Result<F, String> {
    match value {
        Edn::Keyword(name) | Edn::Str(name) => Ok(F::from(name.clone())),
        other => Err(format!(
            "`:f` must be a keyword, found {}",
            other.describe()
        )),
    }
}

fn natural(value: &Edn, field: &str) -> Result<u64, String> {
    match value {
        Edn::Int(n) if *n >= 0 => Ok(n.unsigned_abs()),
        other => Err(format!(
            "`:{field}` must be a non-negative integer, found {}",
            other.describe()
        )),
    }
}

/// A string field that may also be written as a keyword or an integer; nil is absent.
fn text(value: Option<&Edn>, field: &str) -> Result<Option<String>, String> {
    match value {
        None | Some(Edn::Nil) => Ok(None),
        Some(v @ (Edn::Str(_) | Edn::Keyword(_) | Edn::Int(_))) => Ok(Some(v.to_text())),
        Some(other) => Err(format!(
            "`:{field}` must be a string, a keyword or an integer, found {}",
            other.describe()
        )),
    }
}
