//! The `checkers` crate's tests against hand-built and generated histories, as one binary.

mod checkers_agree;
mod counter;
mod counter_deletes;
mod counter_exact;
mod counter_properties;
mod ideal_histories;
mod linear;
mod linear_counter;
mod linear_counter_sweep;
mod linear_kv;
mod linear_spill;
mod overflow;
mod peer_histories;
mod readers;
