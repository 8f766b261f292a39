//! What `/proc` says about a process (its memory, its CPU time, its threads' time waiting for a
//! CPU) and about the machine (its load average), the figures the reports print beside the
//! timings so a slow run can be told from a busy machine.

/// VmRSS and VmHWM of a process, KiB.
pub fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// User + system CPU seconds of a process (USER_HZ taken as 100, as on every Linux we run).
pub fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// Seconds every thread of a process ran on a CPU and waited for one (run queue), from
/// `/proc/<pid>/task/*/schedstat`: how much of a latency is the machine's, not the code's.
pub fn schedstat(pid: &str) -> Option<(f64, f64)> {
    let mut run = 0u64;
    let mut wait = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let Ok(task) = task else { continue };
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        let mut f = text
            .split_whitespace()
            .map(|v| v.parse::<u64>().unwrap_or(0));
        run += f.next().unwrap_or(0);
        wait += f.next().unwrap_or(0);
    }
    Some((run as f64 / 1e9, wait as f64 / 1e9))
}

/// KiB in MiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The 1, 5 and 15 minute load averages, `?` when `/proc/loadavg` cannot be read.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
