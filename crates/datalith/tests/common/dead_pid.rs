//! A process id that no process can have (one above the kernel's `pid_max`): what a process
//! that died leaves in a name. Spawning a process to let it exit would fork the test process
//! while other tests hold locks on their files.

pub fn dead_pid() -> u64 {
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    pid_max + 1
}
