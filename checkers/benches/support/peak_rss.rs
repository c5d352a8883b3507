//! The process's peak resident memory while a closure runs (Linux).

/// Runs `f` and returns its result with the process's peak resident memory (VmHWM) while it
/// ran, in bytes: the peak is reset first through `/proc/self/clear_refs` (Linux; `None`
/// elsewhere or when the reset is refused).
pub fn peak_rss<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let out = f();
    let peak = reset.then(vm_hwm).flatten();
    (out, peak)
}

fn vm_hwm() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
