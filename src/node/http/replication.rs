//! RavenDB-mode replication: for every peer, a loop that sends, oldest first, each counter
//! changed since the last change that peer acknowledged, and after a failure tries again, so
//! replicas catch up by themselves once a partition heals, as RavenDB's replication resumes
//! from the last acknowledged etag after reconnecting. Changes that came in by replication
//! and changed this node are passed on too.

use super::messages::RavenWrite;
use super::state::Node;
use crate::api::Ack;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How many changed counters one replication message carries at most.
const BATCH: usize = 512;
/// How long a replication loop sleeps when it has nothing to send, or after a failure.
const IDLE: Duration = Duration::from_millis(100);

/// Starts a replication loop for each peer, now and whenever new peers are introduced;
/// aborting the returned task stops them all.
pub fn spawn(node: Arc<Node>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // Dropped with this task (aborted), the loops stop too.
        let mut running = Loops::default();
        loop {
            running.0.retain(|_, task| !task.is_finished());
            for peer in node.peers.addrs().into_keys() {
                if let Entry::Vacant(slot) = running.0.entry(peer) {
                    let peer = slot.key().clone();
                    slot.insert(tokio::spawn(replicate_to(node.clone(), peer)));
                }
            }
            tokio::time::sleep(IDLE).await;
        }
    })
}

/// The replication loops by peer; each is stopped when this is dropped.
#[derive(Default)]
struct Loops(BTreeMap<String, tokio::task::JoinHandle<()>>);

impl Drop for Loops {
    fn drop(&mut self) {
        self.0.values().for_each(|task| task.abort());
    }
}

/// Sends `peer` every change it has not acknowledged, in order, for as long as it is a peer.
async fn replicate_to(node: Arc<Node>, peer: String) {
    let mut acknowledged = 0;
    while node.peers.addrs().contains_key(&peer) {
        // Listening before looking, so that a change made in between still wakes the loop.
        let woken = node.replication.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let changes = node.raven().store().changes_after(acknowledged, BATCH);
        let Some(last) = changes.last().map(|c| c.number) else {
            tokio::select! {
                biased;
                _ = woken => {}
                _ = tokio::time::sleep(IDLE) => {}
            }
            continue;
        };
        let batch: Vec<RavenWrite> = changes
            .into_iter()
            .map(|c| RavenWrite {
                key: c.key,
                counter: c.counter,
            })
            .collect();
        match node
            .peers
            .call::<_, Ack>(&peer, "/internal/raven", Some(&batch))
            .await
        {
            Ok(_) => acknowledged = last,
            Err(e) => {
                tracing::debug!(%peer, error = %e, "replication failed; trying again");
                tokio::time::sleep(IDLE).await;
            }
        }
    }
}
