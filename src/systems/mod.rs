//! Real systems under test (etcd, Redis with Sentinel), started by the run from the binaries
//! on PATH: each member a child process in its own process group, its data and log in the
//! run folder, stopped when the run ends, on a signal, on a panic, and, through the
//! parent-death signal, when the driver itself is killed.

pub mod etcd;
mod members;
pub mod redis;

pub use members::{Member, MemberSpec, Members};

use crate::workload::system::System;
use std::path::PathBuf;

/// Why a system could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    /// A program the system needs is not on PATH.
    #[error("{system} needs `{program}` on PATH: install the Debian package `{package}` (apt-get install {package})")]
    Missing {
        /// The system.
        system: System,
        /// The program looked for.
        program: &'static str,
        /// The Debian package that holds it.
        package: &'static str,
    },
    /// A member's process could not be spawned.
    #[error("could not start {id} ({program})")]
    Spawn {
        /// The member's id.
        id: String,
        /// The program started.
        program: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A member did not come up; its log says why.
    #[error("{id} did not start: {reason} (see {log})", log = log.display())]
    NotReady {
        /// The member's id.
        id: String,
        /// What went wrong.
        reason: String,
        /// The member's log file.
        log: PathBuf,
    },
    /// A file of the run folder could not be written.
    #[error("writing {path}", path = path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// Checks that every program `system` starts is on PATH, before anything starts.
pub fn check_installed(system: System) -> Result<(), SystemError> {
    for (program, package) in system.programs() {
        if find_program(program).is_none() {
            return Err(SystemError::Missing {
                system,
                program,
                package,
            });
        }
    }
    Ok(())
}

/// Where `program` is on PATH.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// What a program says of its version (the first line of `program ARG`), or why not.
pub fn version(program: &str, arg: &str) -> String {
    match std::process::Command::new(program).arg(arg).output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string(),
        Err(e) => format!("unknown ({e})"),
    }
}

/// A free TCP port on `ip`, from the kernel (free when asked; the member binds it soon
/// after).
pub fn free_port(ip: &str) -> std::io::Result<u16> {
    // The kernel may hand a port back once its probe listener closes; ports this process
    // has already handed out are skipped so that two members never share one.
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    for _ in 0..64 {
        let listener = std::net::TcpListener::bind((ip, 0))?;
        let port = listener.local_addr()?.port();
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if !handed_out.contains(&port) {
            handed_out.push(port);
            return Ok(port);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        "no port left that this run has not handed out already",
    ))
}

/// Where member `id` runs: its IP and, with a network, its namespace there; a port on it
/// (`fixed` in a namespace, which the member has to itself; a free one on loopback).
pub fn place(
    network: Option<&crate::cluster::Network>,
    id: &str,
    fixed: u16,
) -> std::io::Result<(String, u16, Option<String>)> {
    match network.and_then(|n| Some((n.addr(id)?, n.namespace(id)?))) {
        Some((ip, ns)) => Ok((ip.to_string(), fixed, Some(ns.to_string()))),
        None => Ok(("127.0.0.1".to_string(), free_port("127.0.0.1")?, None)),
    }
}

/// Waits until `ready` says yes (polled every 100 ms), up to `timeout`; the last reason
/// it said no otherwise.
pub async fn wait_until<F, Fut>(timeout: std::time::Duration, mut ready: F) -> Result<(), String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last = String::from("never asked");
    while tokio::time::Instant::now() < deadline {
        match ready().await {
            Ok(()) => return Ok(()),
            Err(e) => last = e,
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(format!("not ready after {timeout:?}: {last}"))
}

#[cfg(test)]
mod tests {
    use super::free_port;

    #[test]
    fn free_ports_are_never_handed_out_twice() {
        let mut ports: Vec<u16> = (0..500).map(|_| free_port("127.0.0.1").unwrap()).collect();
        ports.sort_unstable();
        let before = ports.len();
        ports.dedup();
        assert_eq!(ports.len(), before);
    }
}
