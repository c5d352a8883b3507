//! An orderly stop on a signal: Ctrl-C (SIGINT), SIGTERM (what CI and systemd send) and
//! SIGHUP all ask for the same stop, once for the whole process. A run stops its load and
//! still checks what it recorded; a soak ends after the run in progress; `serve` stops.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

/// The exit code of a command stopped by a signal (128 + SIGINT, as shells report it).
pub const INTERRUPTED_EXIT: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static STOP: OnceLock<watch::Sender<bool>> = OnceLock::new();

/// Starts listening for the stop signals, once; later calls do nothing. Needs a runtime.
pub fn listen() -> std::io::Result<()> {
    if STOP.get().is_some() {
        return Ok(());
    }
    let kinds = [
        ("Ctrl-C", SignalKind::interrupt()),
        ("SIGTERM", SignalKind::terminate()),
        ("SIGHUP", SignalKind::hangup()),
    ];
    let mut streams = Vec::new();
    for (name, kind) in kinds {
        streams.push((name, signal(kind)?));
    }
    let (sender, _) = watch::channel(false);
    if STOP.set(sender).is_err() {
        return Ok(());
    }
    for (name, mut stream) in streams {
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if REQUESTED.swap(true, Ordering::SeqCst) {
                    eprintln!("{name}: already stopping");
                } else {
                    eprintln!(
                        "{name}: stopping in order (the load stops, what was recorded is checked)"
                    );
                }
                if let Some(stop) = STOP.get() {
                    stop.send_replace(true);
                }
            }
        });
    }
    Ok(())
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Resolves once a stop is asked for (at once if it already was); never without `listen`.
pub async fn wait() {
    let Some(stop) = STOP.get() else {
        return std::future::pending().await;
    };
    let mut seen = stop.subscribe();
    let _ = seen.wait_for(|stopped| *stopped).await;
}
