//! The models a history can be checked against.

mod counter;
mod kv;
mod register;

pub use counter::{CounterInput, CounterModel};
pub use kv::{KvInput, KvModel, KvState};
pub use register::{RegisterInput, RegisterModel};
