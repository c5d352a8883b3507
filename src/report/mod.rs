//! Turns a run folder's history and results into charts and a console summary.

pub mod linear_page;
pub mod plots;
pub mod summary;
