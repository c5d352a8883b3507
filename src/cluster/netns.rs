//! A network of the run's own for `--net netns`: one network namespace per node, each with
//! a veth link to a bridge in the host's namespace, on a /24 of 10.77.0.0/16 that no other
//! interface uses. Partitions are nftables drop rules inside the nodes' namespaces (a set of
//! cut peers per node, both ways), slow links `tc` qdiscs on both ends of a node's link
//! (netem's delay where the kernel has it, else a `tbf` rate limit). Everything is named
//! after the driver's process id, so that a run that was killed is cleaned up by the next.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The rate a slow link is limited to where netem is missing.
const SLOW_RATE: &str = "64kbit";
/// Networks this process made so far: names stay unique when one process runs many.
static MADE: AtomicU32 = AtomicU32::new(0);

/// Why the network could not be made or changed.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// `--net netns` cannot work here; says what is missing.
    #[error("--net netns needs {0}")]
    Unavailable(String),
    /// A command failed.
    #[error("`{command}` failed: {message}")]
    Command {
        /// The command line.
        command: String,
        /// What it printed, or why it did not run.
        message: String,
    },
}

/// What run.json records of the network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// The names' common prefix: `ck<driver pid><letter>`.
    pub tag: String,
    /// The bridge in the host's namespace.
    pub bridge: String,
    /// The bridge's subnet, such as `10.77.12.0/24`; the bridge holds `.1`.
    pub subnet: String,
    /// Each node's namespace and address, by node id.
    pub nodes: BTreeMap<String, NodePlace>,
    /// How slow links are played: `netem delay` or a `tbf` rate limit.
    pub slow_links: String,
}

/// Where one node lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePlace {
    /// The network namespace.
    pub namespace: String,
    /// The node's address on the bridge.
    pub addr: Ipv4Addr,
    /// The host's end of the node's veth link.
    pub veth: String,
}

/// The namespaces, links and rules of one run; removed when dropped.
#[derive(Debug)]
pub struct Network {
    topology: Topology,
    netem: bool,
}

/// Stops with a message naming what is missing when `--net netns` cannot work here.
pub fn check_available() -> Result<(), NetError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(NetError::Unavailable(
            "root (network namespaces, veth links and nftables rules need CAP_NET_ADMIN); run as root or drop --net netns".into(),
        ));
    }
    for (program, package) in [("ip", "iproute2"), ("nft", "nftables"), ("tc", "iproute2")] {
        let found = Command::new(program)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Err(NetError::Unavailable(format!(
                "`{program}` on PATH (Debian's package {package}: apt-get install {package})"
            )));
        }
    }
    let listed = run(&["ip", "netns", "list"]);
    listed.map_err(|e| NetError::Unavailable(format!("network namespaces: {e}")))?;
    Ok(())
}

impl Network {
    /// Makes a namespace, link and address for each of `ids` on a new bridge, after removing
    /// what runs that are gone left behind.
    pub fn create(ids: &[String]) -> Result<Network, NetError> {
        check_available()?;
        remove_leftovers();
        let pid = std::process::id();
        let letter = (b'a' + (MADE.fetch_add(1, Ordering::Relaxed) % 26) as u8) as char;
        let tag = format!("ck{pid}{letter}");
        let octet = free_octet(pid)?;
        let mut topology = Topology {
            bridge: format!("{tag}br"),
            subnet: format!("10.77.{octet}.0/24"),
            nodes: BTreeMap::new(),
            slow_links: String::new(),
            tag: tag.clone(),
        };
        for (i, id) in ids.iter().enumerate() {
            let place = NodePlace {
                namespace: format!("{tag}-{id}"),
                addr: Ipv4Addr::new(10, 77, octet, i as u8 + 2),
                veth: format!("{tag}v{}", i + 1),
            };
            topology.nodes.insert(id.clone(), place);
        }
        // From here on, a failure removes what was made.
        let mut network = Network {
            topology,
            netem: false,
        };
        network.build(octet)?;
        network.netem = network.has_netem();
        network.topology.slow_links = match network.netem {
            true => "netem delay on both ends of the slow node's link".into(),
            false => format!(
                "a tbf rate limit of {SLOW_RATE} on both ends of the slow node's link (this kernel has no netem, so no added delay)"
            ),
        };
        Ok(network)
    }

    fn build(&self, octet: u8) -> Result<(), NetError> {
        let t = &self.topology;
        run(&["ip", "link", "add", &t.bridge, "type", "bridge"])?;
        run(&[
            "ip",
            "addr",
            "add",
            &format!("10.77.{octet}.1/24"),
            "dev",
            &t.bridge,
        ])?;
        run(&["ip", "link", "set", &t.bridge, "up"])?;
        for place in t.nodes.values() {
            let (ns, veth) = (place.namespace.as_str(), place.veth.as_str());
            let inner = format!("{veth}p");
            run(&["ip", "netns", "add", ns])?;
            run(&[
                "ip", "link", "add", veth, "type", "veth", "peer", "name", &inner,
            ])?;
            run(&["ip", "link", "set", &inner, "netns", ns])?;
            run(&["ip", "link", "set", veth, "master", &t.bridge, "up"])?;
            in_ns(ns, &["ip", "link", "set", &inner, "name", "eth0"])?;
            in_ns(
                ns,
                &[
                    "ip",
                    "addr",
                    "add",
                    &format!("{}/24", place.addr),
                    "dev",
                    "eth0",
                ],
            )?;
            in_ns(ns, &["ip", "link", "set", "eth0", "up"])?;
            in_ns(ns, &["ip", "link", "set", "lo", "up"])?;
            in_ns(ns, &["nft", RULES])?;
        }
        Ok(())
    }

    /// Whether this kernel's `tc` has netem (it is a module some kernels leave out).
    fn has_netem(&self) -> bool {
        let Some(place) = self.topology.nodes.values().next() else {
            return false;
        };
        let ns = place.namespace.as_str();
        let added = in_ns(
            ns,
            &[
                "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
            ],
        );
        let _ = in_ns(ns, &["tc", "qdisc", "del", "dev", "lo", "root"]);
        added.is_ok()
    }

    /// What run.json records.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The address node `id` listens on, inside its namespace.
    pub fn addr(&self, id: &str) -> Option<Ipv4Addr> {
        self.topology.nodes.get(id).map(|p| p.addr)
    }

    /// The namespace of node `id`.
    pub fn namespace(&self, id: &str) -> Option<&str> {
        self.topology.nodes.get(id).map(|p| p.namespace.as_str())
    }

    /// Makes `id` drop every packet to and from the nodes `peers`, and no other.
    pub async fn cut(&self, id: &str, peers: &BTreeSet<String>) -> Result<(), NetError> {
        let Some(ns) = self.namespace(id) else {
            return Ok(());
        };
        let addrs: Vec<String> = peers
            .iter()
            .filter_map(|p| self.addr(p))
            .map(|a| a.to_string())
            .collect();
        let mut script = "flush set inet checker cut".to_string();
        if !addrs.is_empty() {
            script.push_str(&format!(
                "; add element inet checker cut {{ {} }}",
                addrs.join(", ")
            ));
        }
        in_ns_async(ns, &["nft", &script]).await
    }

    /// Slows the link of node `id` by `ms` (0: back to full speed), on both of its ends.
    pub async fn slow(&self, id: &str, ms: u64) -> Result<(), NetError> {
        let Some(place) = self.topology.nodes.get(id) else {
            return Ok(());
        };
        let (ns, veth) = (place.namespace.as_str(), place.veth.as_str());
        if ms == 0 {
            // No qdisc to delete is fine: the link is at full speed either way.
            let _ = in_ns_async(ns, &["tc", "qdisc", "del", "dev", "eth0", "root"]).await;
            let _ = run_async(&["tc", "qdisc", "del", "dev", veth, "root"]).await;
            return Ok(());
        }
        let delay = format!("{ms}ms");
        let qdisc: Vec<&str> = match self.netem {
            true => vec!["netem", "delay", &delay],
            false => vec!["tbf", "rate", SLOW_RATE, "burst", "4kb", "latency", &delay],
        };
        let mut inside = vec!["tc", "qdisc", "replace", "dev", "eth0", "root"];
        inside.extend(&qdisc);
        in_ns_async(ns, &inside).await?;
        let mut outside = vec!["tc", "qdisc", "replace", "dev", veth, "root"];
        outside.extend(&qdisc);
        run_async(&outside).await
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        remove(&self.topology.tag);
    }
}

/// Each node namespace's table: a set of cut peers, dropped both ways.
const RULES: &str = "add table inet checker; \
    add set inet checker cut { type ipv4_addr; }; \
    add chain inet checker input { type filter hook input priority 0; policy accept; }; \
    add chain inet checker output { type filter hook output priority 0; policy accept; }; \
    add rule inet checker input ip saddr @cut drop; \
    add rule inet checker output ip daddr @cut drop";

/// Removes the namespaces, links and bridge named after `tag`.
fn remove(tag: &str) {
    let prefix = format!("{tag}-");
    for ns in namespaces().iter().filter(|n| n.starts_with(&prefix)) {
        if let Err(e) = run(&["ip", "netns", "del", ns]) {
            tracing::warn!(namespace = %ns, error = %e, "could not remove a namespace");
        }
    }
    // A namespace's links go when the kernel gets to it, which can take seconds: the
    // host's ends (`<tag>v<i>`) and the bridge are removed now.
    let ours = |l: &String| {
        l.strip_prefix(tag)
            .is_some_and(|r| r == "br" || r.starts_with('v'))
    };
    for link in links().iter().filter(|l| ours(l)) {
        if let Err(e) = run(&["ip", "link", "del", link]) {
            tracing::warn!(%link, error = %e, "could not remove a link");
        }
    }
}

/// Removes what runs whose driver is gone (killed, say) left behind.
fn remove_leftovers() {
    let mut tags = BTreeSet::new();
    for name in namespaces().into_iter().chain(links()) {
        if let Some((tag, pid)) = tag_of(&name) {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                tags.insert(tag);
            }
        }
    }
    for tag in tags {
        tracing::warn!(%tag, "removing the network namespaces and links a killed run left");
        remove(&tag);
    }
}

/// The tag and the driver's pid in a name this module made: `ck<pid><letter>...`.
pub fn tag_of(name: &str) -> Option<(String, u32)> {
    let rest = name.strip_prefix("ck")?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let letter = rest[digits..]
        .chars()
        .next()
        .filter(char::is_ascii_lowercase)?;
    let pid = rest[..digits].parse().ok()?;
    Some((format!("ck{}{letter}", &rest[..digits]), pid))
}

/// The network namespaces, by name.
pub fn namespaces() -> Vec<String> {
    let listed = run_output(&["ip", "netns", "list"]).unwrap_or_default();
    listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The links of the host's namespace, by name.
pub fn links() -> Vec<String> {
    let listed = run_output(&["ip", "-o", "link", "show"]).unwrap_or_default();
    listed
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|name| name.split('@').next().unwrap_or(name).to_string())
        .collect()
}

/// A third octet for 10.77.X.0/24 that no interface's address uses, starting from `pid`.
fn free_octet(pid: u32) -> Result<u8, NetError> {
    let used = run_output(&["ip", "-o", "-4", "addr", "show"])?;
    let start = pid % 250;
    (0..250)
        .map(|i| ((start + i) % 250 + 1) as u8)
        .find(|x| !used.contains(&format!("10.77.{x}.")))
        .ok_or_else(|| NetError::Unavailable("a free /24 in 10.77.0.0/16".into()))
}

fn in_ns(ns: &str, args: &[&str]) -> Result<(), NetError> {
    let mut all = vec!["ip", "netns", "exec", ns];
    all.extend(args);
    run(&all)
}

fn run(args: &[&str]) -> Result<(), NetError> {
    run_output(args).map(|_| ())
}

fn run_output(args: &[&str]) -> Result<String, NetError> {
    let failed = |message: String| NetError::Command {
        command: args.join(" "),
        message,
    };
    let output = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed(e.to_string()))?;
    if !output.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&output.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

async fn in_ns_async(ns: &str, args: &[&str]) -> Result<(), NetError> {
    let mut all = vec!["ip", "netns", "exec", ns];
    all.extend(args);
    run_async(&all).await
}

async fn run_async(args: &[&str]) -> Result<(), NetError> {
    let failed = |message: String| NetError::Command {
        command: args.join(" "),
        message,
    };
    let output = tokio::process::Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| failed(e.to_string()))?;
    match output.status.success() {
        true => Ok(()),
        false => Err(failed(
            String::from_utf8_lossy(&output.stderr).trim().to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_the_driver_that_made_them() {
        assert_eq!(tag_of("ck1234a-n1"), Some(("ck1234a".into(), 1234)));
        assert_eq!(tag_of("ck77bbr"), Some(("ck77b".into(), 77)));
        assert_eq!(tag_of("ck1234"), None);
        assert_eq!(tag_of("eth0"), None);
        assert_eq!(tag_of("ckabc"), None);
    }
}
