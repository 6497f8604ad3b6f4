//! Renderers shared by kdp's commands: aligned text tables ([`table`]), JSON
//! documents ([`json`]) and JSON lines ([`jsonl`]), and the formats they
//! share ([`format`](mod@format): `--output`, the time formats). What a
//! command's rows hold lives beside them (e.g. [`producers`]), so
//! the next command adds a file, not a fourth copy of the layout code.

pub mod colour;
pub mod failures;
pub mod format;
pub mod json;
pub mod jsonl;
pub mod producers;
pub mod records;
pub mod table;

pub use format::{age, Output, Rfc3339, BUFFER};
