//! The process's resident memory and the machine's available memory, as the kernel tells
//! them (Linux), for the search's memory limit.

use std::sync::OnceLock;

/// Bytes of the process's memory resident now, or `None` where the kernel does not say.
/// Cheap enough (a few microseconds) to ask every millisecond.
pub fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size()?)
}

/// The kernel's page size, from the process's auxiliary vector (`AT_PAGESZ`).
fn page_size() -> Option<usize> {
    static PAGE: OnceLock<Option<usize>> = OnceLock::new();
    *PAGE.get_or_init(|| {
        const AT_PAGESZ: usize = 6;
        let width = std::mem::size_of::<usize>();
        let auxv = std::fs::read("/proc/self/auxv").ok()?;
        auxv.chunks_exact(2 * width).find_map(|pair| {
            let (key, value) = pair.split_at(width);
            let word = |b: &[u8]| b.try_into().ok().map(usize::from_ne_bytes);
            (word(key)? == AT_PAGESZ).then(|| word(value)).flatten()
        })
    })
}

/// The memory limit when none is given: what the process holds now plus three quarters of
/// the memory the machine has available, so the search gives up before the machine runs
/// out; 4 GiB where the kernel does not say.
pub fn default_memory_limit() -> usize {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| kib_field(&m, "MemAvailable:"));
    match (resident_bytes(), available) {
        (Some(held), Some(available)) => held + available / 4 * 3,
        _ => 4 << 30,
    }
}

/// The value of a `Name:   1234 kB` line, in bytes.
fn kib_field(text: &str, name: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: usize = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_in_bytes() {
        let text = "Name:\tx\nVmRSS:\t    1234 kB\nVmHWM:\t 9 kB\n";
        assert_eq!(kib_field(text, "VmRSS:"), Some(1234 * 1024));
        assert_eq!(kib_field(text, "VmSwap:"), None);
        assert_eq!(kib_field("VmRSS: lots kB", "VmRSS:"), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_page_size_is_the_kernels() {
        let page = page_size().expect("Linux says");
        assert!(page.is_power_of_two() && page >= 4096, "{page}");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_resident_memory_grows_with_what_is_touched() {
        let before = resident_bytes().expect("Linux says");
        let block = std::hint::black_box(vec![1u8; 128 << 20]);
        let after = resident_bytes().expect("Linux says");
        assert!(after >= before + (64 << 20), "{before} -> {after}");
        assert!(default_memory_limit() > after);
        drop(block);
    }
}
