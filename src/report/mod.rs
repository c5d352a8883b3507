//! Turns a run folder's history and results into charts, pages and a console summary.

pub mod budgets;
pub mod excerpt;
pub mod html;
pub mod index;
pub mod junit;
pub mod linear_page;
pub mod page;
pub mod plots;
pub mod rate;
pub mod run_report;
pub mod summary;
pub mod timeline;
pub mod verdict;
