//! A network of the run's own for `--net netns`: one network namespace per node, each with
//! a veth link to a bridge in the host's namespace, on a /24 of 10.77.0.0/16 that no other
//! interface uses. Partitions are nftables drop rules inside the nodes' namespaces (a set of
//! cut peers per node, both ways, and one of peers cut one way), slow links `tc` qdiscs on
//! both ends of a node's link (netem's delay where the kernel has it, else a `tbf` rate
//! limit).
//!
//! Every name starts with the run's tag, `ck<driver pid><two random letters>`. Making the
//! bridge claims the tag (the kernel refuses a second link of that name), and the driver
//! holds a lock on `/run/checker-netns/<tag>.lock` while the network lives: a later run
//! removes the networks whose lock nobody holds (their driver was killed), and no other.

use crate::workload::net::{NodePlace, Topology};
use rand::Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The rate a slow link is limited to where netem is missing.
const SLOW_RATE: &str = "64kbit";
/// Where the drivers' locks live.
const LOCKS: &str = "/run/checker-netns";
/// Tags and subnets tried before giving up.
const ATTEMPTS: usize = 16;

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
    /// The lock file could not be made.
    #[error("{}: {source}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// The namespaces, links and rules of one run; removed when dropped.
#[derive(Debug)]
pub struct Network {
    topology: Topology,
    netem: bool,
    /// Held while the network lives: a run that finds it free removes the network.
    _lock: File,
}

/// Stops with a message naming what is missing when `--net netns` cannot work here: root,
/// the programs, and the right to make a namespace and a link (a container may deny it).
pub fn check_available() -> Result<(), NetError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(NetError::Unavailable(
            "root (network namespaces, veth links and nftables rules need CAP_NET_ADMIN); run as root or drop --net netns".into(),
        ));
    }
    for (program, package) in [("ip", "iproute2"), ("nft", "nftables"), ("tc", "iproute2")] {
        let found = Command::new(program)
            .arg(if program == "nft" { "--version" } else { "-V" })
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
    // A probe's names match no tag, so no run ever takes them for a leftover.
    let probe = format!("ckprobe{}", std::process::id());
    let made = run(&["ip", "netns", "add", &probe])
        .and_then(|_| run(&["ip", "link", "add", &probe, "type", "bridge"]));
    let _ = run(&["ip", "link", "del", &probe]);
    let _ = run(&["ip", "netns", "del", &probe]);
    made.map_err(|e| {
        NetError::Unavailable(format!(
            "the right to make network namespaces and links, which this root lacks (a container without CAP_NET_ADMIN and CAP_SYS_ADMIN?): {e}"
        ))
    })
}

impl Network {
    /// Makes a namespace, link and address for each of `ids` on a new bridge, after removing
    /// what runs that are gone left behind; [`check_available`] first says what is missing.
    pub fn create(ids: &[String]) -> Result<Network, NetError> {
        remove_leftovers();
        let (tag, lock) = claim_tag()?;
        let bridge = format!("{tag}br");
        // From here on, the network is removed when dropped, also midway.
        let mut network = Network {
            topology: Topology {
                tag: tag.clone(),
                bridge: bridge.clone(),
                subnet: String::new(),
                nodes: BTreeMap::new(),
                slow_links: String::new(),
            },
            netem: false,
            _lock: lock,
        };
        let octet = claim_subnet(&bridge)?;
        network.topology.subnet = format!("10.77.{octet}.0/24");
        for (i, id) in ids.iter().enumerate() {
            let place = NodePlace {
                namespace: format!("{tag}-{id}"),
                addr: Ipv4Addr::new(10, 77, octet, i as u8 + 2),
                veth: format!("{tag}v{}", i + 1),
            };
            network.topology.nodes.insert(id.clone(), place);
        }
        network.build()?;
        network.netem = network.has_netem();
        network.topology.slow_links = match network.netem {
            true => "netem delay on both ends of the slow node's link".into(),
            false => format!(
                "a tbf rate limit of {SLOW_RATE} on both ends of the slow node's link (this kernel has no netem, so no added delay)"
            ),
        };
        Ok(network)
    }

    fn build(&self) -> Result<(), NetError> {
        let t = &self.topology;
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
        self.fill(id, "cut", peers).await
    }

    /// Makes `id` drop every packet it sends to the nodes `peers` (a one-way cut: theirs
    /// still arrive, on connections already open), and no other.
    pub async fn cut_to(&self, id: &str, peers: &BTreeSet<String>) -> Result<(), NetError> {
        self.fill(id, "cut_to", peers).await
    }

    /// Makes the nftables set `set` in node `id`'s namespace hold the addresses of `peers`.
    async fn fill(&self, id: &str, set: &str, peers: &BTreeSet<String>) -> Result<(), NetError> {
        let Some(ns) = self.namespace(id) else {
            return Ok(());
        };
        let addrs: Vec<String> = peers
            .iter()
            .filter_map(|p| self.addr(p))
            .map(|a| a.to_string())
            .collect();
        let mut script = format!("flush set inet checker {set}");
        if !addrs.is_empty() {
            script.push_str(&format!(
                "; add element inet checker {set} {{ {} }}",
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
        let _ = std::fs::remove_file(lock_path(&self.topology.tag));
    }
}

/// Each node namespace's table: a set of cut peers, dropped both ways, and one of peers cut
/// one way, dropped on the way out.
const RULES: &str = "add table inet checker; \
    add set inet checker cut { type ipv4_addr; }; \
    add set inet checker cut_to { type ipv4_addr; }; \
    add chain inet checker input { type filter hook input priority 0; policy accept; }; \
    add chain inet checker output { type filter hook output priority 0; policy accept; }; \
    add rule inet checker input ip saddr @cut drop; \
    add rule inet checker output ip daddr @cut drop; \
    add rule inet checker output ip daddr @cut_to drop";

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
        // One the kernel removed meanwhile is gone, as wanted.
        let failed = run(&["ip", "link", "del", link]).err();
        if let Some(e) = failed.filter(|_| links().contains(link)) {
            tracing::warn!(%link, error = %e, "could not remove a link");
        }
    }
}

/// Removes the networks whose driver is gone (killed, say): those whose lock nobody holds.
fn remove_leftovers() {
    let tags: BTreeSet<String> = namespaces()
        .into_iter()
        .chain(links())
        .filter_map(|name| tag_of(&name))
        .collect();
    for tag in tags {
        let path = lock_path(&tag);
        let Ok(file) = File::options().write(true).open(&path) else {
            // No lock: not a network this machine's drivers made, or made in another /run.
            continue;
        };
        if file.try_lock().is_ok() {
            tracing::warn!(%tag, "removing the network namespaces and links a killed run left");
            remove(&tag);
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A new tag and its lock, held: the bridge named after it is made (so the tag is this
/// run's alone) and left without an address.
fn claim_tag() -> Result<(String, File), NetError> {
    let dir = PathBuf::from(LOCKS);
    std::fs::create_dir_all(&dir).map_err(|source| NetError::Lock {
        path: dir.clone(),
        source,
    })?;
    let mut rng = rand::thread_rng();
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let letters: String = (0..2).map(|_| rng.gen_range(b'a'..=b'z') as char).collect();
        let tag = format!("ck{}{letters}", std::process::id());
        let path = lock_path(&tag);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path);
        let lock = file.map_err(|source| NetError::Lock {
            path: path.clone(),
            source,
        })?;
        if lock.try_lock().is_err() {
            continue; // a live run's tag
        }
        match run(&["ip", "link", "add", &format!("{tag}br"), "type", "bridge"]) {
            Ok(()) => return Ok((tag, lock)),
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                last = Some(e);
            }
        }
    }
    Err(last.unwrap_or_else(|| NetError::Unavailable("a free name".into())))
}

/// Gives `bridge` the first address of a /24 of 10.77.0.0/16 that no other interface
/// uses, checked again once it holds it (another run may have picked the same); returns
/// the third octet.
fn claim_subnet(bridge: &str) -> Result<u8, NetError> {
    let start = rand::thread_rng().gen_range(0..250u32);
    for x in (0..250).map(|i| ((start + i) % 250 + 1) as u8) {
        let prefix = format!("10.77.{x}.");
        let used_by = |text: &str| {
            text.lines()
                .filter(|l| l.contains(&format!(" inet {prefix}")))
                .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
                .collect::<Vec<_>>()
        };
        if !used_by(&run_output(&["ip", "-o", "-4", "addr", "show"])?).is_empty() {
            continue;
        }
        let addr = format!("{prefix}1/24");
        run(&["ip", "addr", "add", &addr, "dev", bridge])?;
        let holders = used_by(&run_output(&["ip", "-o", "-4", "addr", "show"])?);
        if holders.iter().all(|h| h == bridge) {
            run(&["ip", "link", "set", bridge, "up"])?;
            return Ok(x);
        }
        run(&["ip", "addr", "del", &addr, "dev", bridge])?;
    }
    Err(NetError::Unavailable("a free /24 in 10.77.0.0/16".into()))
}

fn lock_path(tag: &str) -> PathBuf {
    PathBuf::from(LOCKS).join(format!("{tag}.lock"))
}

/// The tag in a name this module made: `ck<pid><two letters>...`.
fn tag_of(name: &str) -> Option<String> {
    let rest = name.strip_prefix("ck")?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let letters = rest.get(digits..digits + 2)?;
    let ok = digits > 0 && letters.chars().all(|c| c.is_ascii_lowercase());
    ok.then(|| format!("ck{}{letters}", &rest[..digits]))
}

/// The network namespaces, by name.
fn namespaces() -> Vec<String> {
    let listed = run_output(&["ip", "netns", "list"]).unwrap_or_default();
    listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The links of the host's namespace, by name.
fn links() -> Vec<String> {
    let listed = run_output(&["ip", "-o", "link", "show"]).unwrap_or_default();
    listed
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|name| name.split('@').next().unwrap_or(name).to_string())
        .collect()
}

fn in_ns(ns: &str, args: &[&str]) -> Result<(), NetError> {
    run(&within(ns, args))
}

/// The command line that runs `args` inside namespace `ns`.
fn within<'a>(ns: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["ip", "netns", "exec", ns];
    all.extend(args);
    all
}

fn run(args: &[&str]) -> Result<(), NetError> {
    run_output(args).map(|_| ())
}

fn run_output(args: &[&str]) -> Result<String, NetError> {
    let output = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output();
    finished(args, output)
}

/// What a finished command printed, or why it failed, naming it.
fn finished(args: &[&str], output: std::io::Result<Output>) -> Result<String, NetError> {
    let failed = |message: String| NetError::Command {
        command: args.join(" "),
        message,
    };
    let output = output.map_err(|e| failed(e.to_string()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(failed(stderr.trim().to_string()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

async fn in_ns_async(ns: &str, args: &[&str]) -> Result<(), NetError> {
    run_async(&within(ns, args)).await
}

async fn run_async(args: &[&str]) -> Result<(), NetError> {
    let output = tokio::process::Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .await;
    finished(args, output).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_a_network_makes_gives_back_its_tag_and_no_other_name_does() {
        for name in ["ck1234ab-n1", "ck1234abbr", "ck1234abv12"] {
            assert_eq!(tag_of(name).as_deref(), Some("ck1234ab"), "{name}");
        }
        for name in ["ck1234", "ck1234a", "eth0", "ckabc", "ckprobe77", "ck12A1"] {
            assert_eq!(tag_of(name), None, "{name}");
        }
    }
}
