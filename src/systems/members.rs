//! The processes of a real system: spawned from a command line each, killed, restarted on
//! the same command line (and so the same data folder and ports), paused, and stopped.

use super::SystemError;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// How long a member may take to stop after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);

/// How to start one member: its id, its program and arguments, the network namespace it
/// runs in (if any), where its output goes, and the address clients reach it at.
#[derive(Debug, Clone)]
pub struct MemberSpec {
    /// The member's id (`n1`, ...; `s1`, ... for Redis's sentinels).
    pub id: String,
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The network namespace it runs in, with `--net netns`.
    pub netns: Option<String>,
    /// Its log file (stdout and stderr).
    pub log: PathBuf,
    /// `host:port` its clients connect to.
    pub addr: String,
}

/// One running member.
pub struct Member {
    /// How it was started, and is started again.
    pub spec: MemberSpec,
    /// Its process id when it was started (signalled only while it runs).
    pub pid: u32,
    child: Child,
}

/// Every process of one run's system; killed when dropped.
#[derive(Default)]
pub struct Members {
    members: Vec<Member>,
}

impl Members {
    /// Starts a member and keeps it.
    pub fn spawn(&mut self, spec: MemberSpec) -> Result<&Member, SystemError> {
        let member = spawn(spec)?;
        self.members.push(member);
        Ok(self.members.last().expect("just pushed"))
    }

    /// Every member, in the order they were started.
    pub fn all(&self) -> &[Member] {
        &self.members
    }

    /// The member `id`.
    pub fn get(&self, id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.spec.id == id)
    }

    /// Kills member `id` with SIGKILL, as a crash would, and waits until it is gone.
    pub async fn kill(&mut self, id: &str) -> Result<(), String> {
        let member = self.find(id)?;
        let _ = member.child.kill().await;
        Ok(())
    }

    /// Starts member `id` again on its command line, after killing it if it still runs.
    pub async fn restart(&mut self, id: &str) -> Result<(), String> {
        let member = self.find(id)?;
        let _ = member.child.kill().await;
        *member = spawn(member.spec.clone()).map_err(|e| match std::error::Error::source(&e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        })?;
        Ok(())
    }

    /// Stops (SIGSTOP) or resumes (SIGCONT) member `id`; nothing once it has exited.
    pub fn pause(&mut self, id: &str, paused: bool) -> Result<(), String> {
        let member = self.find(id)?;
        if !matches!(member.child.try_wait(), Ok(None)) {
            return Ok(());
        }
        let signal = if paused {
            Signal::SIGSTOP
        } else {
            Signal::SIGCONT
        };
        kill(Pid::from_raw(member.pid as i32), signal).map_err(|e| format!("{id}: {e}"))
    }

    /// The members whose process has exited.
    pub fn dead(&mut self) -> Vec<String> {
        let exited = |m: &mut Member| !matches!(m.child.try_wait(), Ok(None));
        let mut dead = Vec::new();
        for member in &mut self.members {
            if exited(member) {
                dead.push(member.spec.id.clone());
            }
        }
        dead
    }

    /// Stops every member: SIGCONT and SIGTERM, then SIGKILL for those still running after
    /// a grace period.
    pub async fn stop(&mut self) {
        for member in &mut self.members {
            // A member already reaped has no pid of its own any more.
            if !matches!(member.child.try_wait(), Ok(None)) {
                continue;
            }
            let pid = Pid::from_raw(member.pid as i32);
            let _ = kill(pid, Signal::SIGCONT);
            let _ = kill(pid, Signal::SIGTERM);
        }
        // One grace period for all: a member still running when it ends is killed.
        let deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
        for member in &mut self.members {
            if tokio::time::timeout_at(deadline, member.child.wait())
                .await
                .is_err()
            {
                tracing::info!(member = %member.spec.id, "still running after SIGTERM: killed");
                let _ = member.child.kill().await;
            }
        }
        self.members.clear();
    }

    fn find(&mut self, id: &str) -> Result<&mut Member, String> {
        let found = self.members.iter_mut().find(|m| m.spec.id == id);
        found.ok_or_else(|| format!("no member {id}"))
    }
}

impl Drop for Members {
    fn drop(&mut self) {
        for member in &mut self.members {
            if matches!(member.child.try_wait(), Ok(None)) {
                let _ = kill(Pid::from_raw(member.pid as i32), Signal::SIGCONT);
            }
            let _ = member.child.start_kill();
        }
    }
}

/// Starts one member in a process group of its own (a Ctrl-C reaches the driver, which
/// stops the members itself), killed by the kernel when the driver dies.
fn spawn(spec: MemberSpec) -> Result<Member, SystemError> {
    let error = |source| SystemError::Spawn {
        id: spec.id.clone(),
        program: spec.program.clone(),
        source,
    };
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&spec.log)
        .map_err(error)?;
    let log_err = log.try_clone().map_err(error)?;
    let mut command = match &spec.netns {
        // `ip netns exec` enters the namespace and execs the program: the process stays ours.
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, &spec.program]);
            c
        }
        None => Command::new(&spec.program),
    };
    command
        .args(&spec.args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: the closure runs in the child between fork and exec and calls only prctl,
    // which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().map_err(error)?;
    Ok(Member {
        pid: child.id().unwrap_or_default(),
        spec,
        child,
    })
}
