//! Turns a run folder's history and results into charts, pages and a console summary.

pub mod fault_shading;
pub mod folder;
pub mod html;
pub mod index;
pub mod linear_page;
pub mod page;
pub mod plots;
pub mod summary;
pub mod timeline;
