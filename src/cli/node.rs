//! `checker node`: one bundled counter node, serving until SIGTERM or Ctrl-C.

use crate::api::secret::read_settings_file;
use crate::api::ClusterSettings;
use crate::error::BadInput;
use crate::node::{serve, NodeConfig};
use anyhow::Context;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `checker node`.
#[derive(Debug, Args)]
pub struct NodeArgs {
    /// The node's id.
    #[arg(long)]
    pub id: String,
    /// Address to listen on; port 0 picks a free one, printed on stdout as JSON.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// The other replicas: `n2=127.0.0.1:PORT,n3=...` (or set later with PUT /admin/peers).
    #[arg(long, value_delimiter = ',', value_parser = parse_peer)]
    pub peers: Vec<(String, String)>,
    /// The cluster's settings, a JSON file of the workload's `[cluster]` table and, from
    /// `run`, the cluster's `secret`; defaults (and no secret) when left out.
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Where the commit log and flushed segments live; a new temporary folder when left out.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Exit when the process that started this node exits.
    #[arg(long)]
    pub exit_with_parent: bool,
    /// Seeds the node's random choices (which replica leads an increment); random when left
    /// out.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads the node runs on (1: a single thread); every core when left out.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// `checker node`.
pub async fn node(args: NodeArgs) -> anyhow::Result<()> {
    let (settings, secret) = match &args.settings {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| BadInput::Usage(format!("reading {}: {e}", path.display())))?;
            read_settings_file(&text)
                .map_err(|e| BadInput::Usage(format!("{}: {e}", path.display())))?
        }
        None => (ClusterSettings::default(), None),
    };
    // A folder of its own when none is given, removed again when the node stops.
    let scratch = (args.data_dir.is_none()).then(|| {
        std::env::temp_dir().join(format!("checker-node-{}-{}", args.id, std::process::id()))
    });
    let data_dir = args
        .data_dir
        .or_else(|| scratch.clone())
        .unwrap_or_default();
    let config = NodeConfig {
        id: args.id,
        listen: args.listen,
        peers: args.peers.into_iter().collect(),
        settings,
        data_dir,
        exit_with_parent: args.exit_with_parent,
        seed: args.seed.unwrap_or_else(rand::random),
        secret,
    };
    let served = serve(config).await;
    if let Some(scratch) = scratch {
        let removed = std::fs::remove_dir_all(&scratch);
        if let (Err(e), true) = (removed, scratch.exists()) {
            tracing::warn!(error = %e, "could not remove {}", scratch.display());
        }
    }
    served.with_context(|| format!("serving node on {}", args.listen))
}

fn parse_peer(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((id, addr)) if !id.is_empty() && addr.parse::<SocketAddr>().is_ok() => {
            Ok((id.to_string(), addr.to_string()))
        }
        _ => Err(format!("expected ID=HOST:PORT, got `{s}`")),
    }
}
