//! RavenDB-mode storage on disk: every change of a counter (its whole new state) reaches the
//! journal, synced, before it is acknowledged, as RavenDB commits each transaction to its
//! journal; a restart replays the journal, each key's last state winning.

use super::raven::{RavenCounter, RavenStore};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// One journal line.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    counter: RavenCounter,
}

/// A RavenDB-mode store and its journal, changed together.
pub struct RavenDurable {
    store: RavenStore,
    journal: File,
}

impl RavenDurable {
    /// Opens `dir/raven.jsonl` (created if missing) and restores node `node`'s store from it;
    /// a torn last line is dropped.
    pub fn open(node: &str, dir: &Path) -> std::io::Result<RavenDurable> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("raven.jsonl");
        let mut states = Vec::new();
        if let Ok(file) = File::open(&path) {
            for line in BufReader::new(file).lines() {
                match serde_json::from_str::<Entry>(&line?) {
                    Ok(entry) => states.push((entry.key, entry.counter)),
                    Err(_) => break,
                }
            }
        }
        let journal = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(RavenDurable {
            store: RavenStore::restore(node, states),
            journal,
        })
    }

    /// The store, to read.
    pub fn store(&self) -> &RavenStore {
        &self.store
    }

    /// An increment ([`RavenStore::increment`]), journaled.
    pub fn increment(&mut self, key: &str, delta: i64) -> std::io::Result<()> {
        let counter = self.store.increment(key, delta);
        self.write(key, &counter)
    }

    /// A delete ([`RavenStore::delete`]), journaled.
    pub fn delete(&mut self, key: &str) -> std::io::Result<()> {
        let counter = self.store.delete(key);
        self.write(key, &counter)
    }

    /// A replicated state merged ([`RavenStore::merge`]) when it changes something: journaled
    /// first, so that a change the journal did not take is not held either (and the sender,
    /// unacknowledged, sends it again).
    pub fn merge(&mut self, key: &str, incoming: &RavenCounter) -> std::io::Result<bool> {
        let Some(merged) = self.store.merged(key, incoming) else {
            self.store.merge(key, incoming);
            return Ok(false);
        };
        self.write(key, &merged)?;
        Ok(self.store.merge(key, incoming))
    }

    fn write(&mut self, key: &str, counter: &RavenCounter) -> std::io::Result<()> {
        let entry = Entry {
            key: key.to_string(),
            counter: counter.clone(),
        };
        let mut line = serde_json::to_vec(&entry)?;
        line.push(b'\n');
        self.journal.write_all(&line)?;
        self.journal.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restarted_node_gets_back_every_acknowledged_change_and_keeps_its_etags() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut n1 = RavenDurable::open("n1", dir.path()).expect("open");
        n1.increment("x", 5).expect("increment");
        n1.delete("y").expect("delete");
        let incoming = RavenStore::new("n2").increment("x", 3);
        assert!(n1.merge("x", &incoming).expect("merge"));
        let before = n1.store().counters().clone();
        drop(n1); // a kill
        let mut n1 = RavenDurable::open("n1", dir.path()).expect("reopen");
        assert_eq!(n1.store().counters(), &before);
        assert_eq!(n1.store().get("x").and_then(RavenCounter::value), Some(8));
        n1.increment("z", 1).expect("increment");
        // Etags 1 (x) and 2 (y) were issued before the kill: the next is 3.
        let z = n1.store().get("z").cloned();
        assert!(matches!(z, Some(RavenCounter::Live { portions }) if portions["n1"].etag == 3));
    }
}
