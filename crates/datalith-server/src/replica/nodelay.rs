//! `TCP_NODELAY` on this process's connections to the brokers.
//!
//! rskafka (0.6) opens its sockets with Nagle's algorithm on, and offers no way to turn it
//! off. Its requests go through an 8 KiB write buffer: a larger request (a transaction of a
//! few hundred records) is written as its 4-byte length, then its body; under Nagle the body
//! waits in the send buffer until the broker acknowledges the length, which Linux delays up to
//! its delayed-ACK timeout (40 ms). Measured on this machine (`scale/figures.py --parts
//! latency`, three brokers, appends on a connection of their own): batch-1000 transactions
//! took 55 ms p50 to acknowledge, against 5.6 ms at batch 100.
//!
//! So the sockets are found where the kernel lists them, `/proc/self/fd`: a stream socket whose
//! peer is one of the brokers' addresses gets `TCP_NODELAY`, which changes when segments
//! leave, never what they carry. rskafka opens a new connection after a broker fails, so the
//! walk runs again, at most once a second, from the calls that use the log
//! ([`NoDelay::refresh`]).

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// How often [`NoDelay::refresh`] walks the descriptors at most.
const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// The brokers' addresses, and when their sockets were last looked at.
pub struct NoDelay {
    peers: Vec<SocketAddr>,
    started: Instant,
    /// Milliseconds after `started` of the last walk (-1: never).
    last_ms: AtomicI64,
}

impl NoDelay {
    /// For the brokers `host:port` (each name resolved now; one that does not resolve is
    /// left out: rskafka will fail to reach it too).
    pub fn new(brokers: &[String]) -> NoDelay {
        let peers = brokers
            .iter()
            .filter_map(|b| b.to_socket_addrs().ok())
            .flatten()
            .collect();
        NoDelay {
            peers,
            started: Instant::now(),
            last_ms: AtomicI64::new(-1),
        }
    }

    /// [`NoDelay::apply`], unless it ran less than [`REFRESH_EVERY`] ago.
    pub fn refresh(&self) {
        let now = self.started.elapsed().as_millis() as i64;
        let last = self.last_ms.load(Ordering::Relaxed);
        if last >= 0 && now - last < REFRESH_EVERY.as_millis() as i64 {
            return;
        }
        if self
            .last_ms
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.apply();
        }
    }

    /// Sets `TCP_NODELAY` on every stream socket of this process connected to a broker that
    /// lacks it; returns how many it set. Nothing else is touched: a descriptor closed or
    /// reused meanwhile is looked at again by its peer before anything is set.
    pub fn apply(&self) -> usize {
        let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
            return 0;
        };
        let fds: Vec<libc::c_int> = entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        fds.into_iter()
            .filter(|&fd| peer_of(fd).is_some_and(|p| self.peers.contains(&p)))
            .filter(|&fd| set_nodelay(fd))
            .count()
    }
}

/// The peer of `fd` when it is a connected stream socket.
fn peer_of(fd: libc::c_int) -> Option<SocketAddr> {
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `kind` and `len` are valid for writes of the sizes given; a descriptor that is
    // not a socket (or was closed) makes the call fail, which is checked.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            &mut kind as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 || kind != libc::SOCK_STREAM {
        return None;
    }
    // SAFETY: zeroed storage is a valid `sockaddr_storage`; `getpeername` writes at most
    // `len` bytes into it.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let rc = unsafe {
        libc::getpeername(
            fd,
            &mut storage as *mut libc::sockaddr_storage as *mut libc::sockaddr,
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    match storage.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a `sockaddr_in`.
            let a = unsafe {
                &*(&storage as *const libc::sockaddr_storage as *const libc::sockaddr_in)
            };
            let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::from((ip, u16::from_be(a.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a `sockaddr_in6`.
            let a = unsafe {
                &*(&storage as *const libc::sockaddr_storage as *const libc::sockaddr_in6)
            };
            let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
            Some(SocketAddr::from((ip, u16::from_be(a.sin6_port))))
        }
        _ => None,
    }
}

/// Sets `TCP_NODELAY` on `fd` if it is off; whether it set it.
fn set_nodelay(fd: libc::c_int) -> bool {
    let mut on: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `on` and `len` are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            &mut on as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 || on != 0 {
        return false;
    }
    let one: libc::c_int = 1;
    // SAFETY: reads one `c_int` from `one`.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            &one as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    rc == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn only_connections_to_the_brokers_get_nodelay() {
        let broker = TcpListener::bind("127.0.0.1:0").unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let to_broker = TcpStream::connect(broker.local_addr().unwrap()).unwrap();
        let to_other = TcpStream::connect(other.local_addr().unwrap()).unwrap();
        let (accepted, _) = broker.accept().unwrap();
        for s in [&to_broker, &to_other, &accepted] {
            s.set_nodelay(false).unwrap();
        }
        let nodelay = NoDelay::new(&[broker.local_addr().unwrap().to_string()]);
        assert_eq!(nodelay.apply(), 1);
        assert!(to_broker.nodelay().unwrap(), "the connection to the broker");
        assert!(!to_other.nodelay().unwrap(), "a connection elsewhere");
        assert!(!accepted.nodelay().unwrap(), "the broker's own end");
        // Set already: nothing to do again.
        assert_eq!(nodelay.apply(), 0);
        // A refresh right after the last walk does not walk again.
        let fresh = TcpStream::connect(broker.local_addr().unwrap()).unwrap();
        fresh.set_nodelay(false).unwrap();
        nodelay.refresh();
        nodelay.refresh();
        let walked_once = fresh.nodelay().unwrap();
        assert!(walked_once, "the first refresh walks");
        let later = TcpStream::connect(broker.local_addr().unwrap()).unwrap();
        later.set_nodelay(false).unwrap();
        nodelay.refresh();
        assert!(
            !later.nodelay().unwrap(),
            "a refresh within a second of the last walks nothing"
        );
    }
}
