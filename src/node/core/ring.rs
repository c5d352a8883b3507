//! Replica placement on a token ring: a partition's replicas are the `rf` nodes that follow
//! its token, as with Cassandra's SimpleStrategy.

/// A stable, well-spread 64-bit token (FNV-1a, then a splitmix64 finish so that similar
/// names such as `n1` and `n2` land far apart), the same on every node and every run.
pub fn token(text: &str) -> u64 {
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let z = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The replicas of `partition` among `nodes`: the `rf` nodes whose tokens follow it.
pub fn replicas(nodes: &[String], partition: &str, rf: usize) -> Vec<String> {
    let mut ring: Vec<(u64, &String)> = nodes.iter().map(|n| (token(n), n)).collect();
    ring.sort();
    let t = token(partition);
    let start = ring.iter().position(|(k, _)| *k >= t).unwrap_or(0);
    (0..rf.min(ring.len()))
        .map(|i| ring[(start + i) % ring.len()].1.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("n{i}")).collect()
    }

    #[test]
    fn every_partition_gets_rf_distinct_replicas() {
        for p in ["views", "likes", "queue", "a", ""] {
            let r = replicas(&nodes(5), p, 3);
            let mut d = r.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), 3, "{p}: {r:?}");
        }
        assert_eq!(replicas(&nodes(3), "views", 3).len(), 3);
    }

    #[test]
    fn placement_spreads_partitions_and_is_stable() {
        let owners: std::collections::BTreeSet<String> = (0..50)
            .map(|i| replicas(&nodes(5), &format!("p{i}"), 1)[0].clone())
            .collect();
        assert!(owners.len() >= 4, "{owners:?}");
        assert_eq!(
            replicas(&nodes(5), "views", 2),
            replicas(&nodes(5), "views", 2)
        );
    }
}
