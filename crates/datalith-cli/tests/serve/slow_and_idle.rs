//! Clients that hold connections without using them: one sending its request a byte a second
//! (headers, or a body) is cut off by the header or body timeout while others are served; ten
//! thousand idle connections from one host take only that host's places, and other hosts are
//! served meanwhile; one that stops reading a large answer is cut off by the send timeout.

use std::io::{Read, Write};
use std::net::{SocketAddrV4, TcpStream};
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

use crate::client::send;
use crate::server;

/// Sends `request` a byte a second on a new connection until the server closes it; returns
/// how many bytes went out, how long it took, and what the server answered.
fn drip(addr: &str, request: &[u8], patience: Duration) -> (usize, Duration, String) {
    drip_on(TcpStream::connect(addr).unwrap(), request, patience)
}

#[test]
fn clients_sending_a_byte_a_second_are_cut_off_while_others_are_served() {
    let s = server::start(
        &["people"],
        &["--header-timeout-ms", "3000", "--body-timeout-ms", "3000"],
    );
    let addr = s.addr();
    let headers = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec();
    let body = {
        let mut r = b"POST /db/people/q HTTP/1.1\r\nHost: x\r\nContent-Type: application/edn\r\nContent-Length: 64\r\n\r\n".to_vec();
        r.extend_from_slice(&[b' '; 64]);
        r
    };
    let header_drip = {
        let addr = addr.clone();
        std::thread::spawn(move || drip(&addr, &headers, Duration::from_secs(30)))
    };
    // The body's headers arrive at once, its bytes a second apart.
    let body_drip = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            let mut stream = TcpStream::connect(&addr).unwrap();
            let head = body.len() - 64;
            stream.write_all(&body[..head]).unwrap();
            drip_on(stream, &body[head..], Duration::from_secs(30))
        })
    };
    // Meanwhile others are served, each at once.
    let start = Instant::now();
    let mut slowest = Duration::ZERO;
    while start.elapsed() < Duration::from_millis(2500) {
        let t = Instant::now();
        assert_eq!(send("GET", &s.url("/health"), &[], None).status, 200);
        slowest = slowest.max(t.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(slowest < Duration::from_millis(500), "{slowest:?}");
    let (sent, took, answer) = header_drip.join().unwrap();
    // Cut off at the header timeout (3 s), a few bytes in, without an answer.
    assert!(sent < 8, "{sent} bytes went out");
    assert!(
        took >= Duration::from_millis(2500) && took < Duration::from_secs(6),
        "{took:?}"
    );
    assert!(!answer.contains("200"), "{answer}");
    let (sent, took, answer) = body_drip.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains(":datalith.error/request-timeout"),
        "{answer}"
    );
    assert!(sent < 8, "{sent} body bytes went out");
    assert!(took < Duration::from_secs(6), "{took:?}");
}

/// Sends `bytes` a byte a second on `stream` until the server closes it (or `patience`
/// passes); waiting up to a second for the server's word after each byte is the pace.
fn drip_on(mut stream: TcpStream, bytes: &[u8], patience: Duration) -> (usize, Duration, String) {
    stream
        .set_read_timeout(Some(Duration::from_millis(1000)))
        .unwrap();
    let start = Instant::now();
    let (mut sent, mut answer, mut buf) = (0, Vec::new(), [0u8; 4096]);
    while start.elapsed() < patience {
        if sent < bytes.len() && stream.write_all(&bytes[sent..sent + 1]).is_err() {
            break;
        }
        sent += 1;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break,
        }
    }
    (
        sent,
        start.elapsed(),
        String::from_utf8_lossy(&answer).to_string(),
    )
}

/// A connection to `to` from the loopback address `from` (127.0.0.0/8 is all this host's).
fn connect_from(from: &str, to: &str) -> TcpStream {
    let (from, to): (SocketAddrV4, SocketAddrV4) =
        (format!("{from}:0").parse().unwrap(), to.parse().unwrap());
    let sockaddr = |a: SocketAddrV4| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a new socket, bound and connected with valid addresses, then owned by the
    // TcpStream (which closes it).
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let (f, t) = (sockaddr(from), sockaddr(to));
        assert_eq!(
            libc::bind(fd, &f as *const _ as *const libc::sockaddr, len),
            0
        );
        assert_eq!(
            libc::connect(fd, &t as *const _ as *const libc::sockaddr, len),
            0,
            "{}",
            std::io::Error::last_os_error()
        );
        TcpStream::from_raw_fd(fd)
    }
}

/// `GET /health` on a new connection from `from`: the status (0: none came).
fn health_from(from: &str, to: &str) -> u16 {
    let mut stream = connect_from(from, to);
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Up to `n` connections to `addr` that send nothing (as many as this process may open),
/// opened from 127.0.0.1 by `threads` threads: a connect whose SYN finds the listen queue
/// full waits a second for the kernel to send it again, and those seconds overlap.
fn open_idle(addr: &str, n: u64, threads: u64) -> Vec<TcpStream> {
    let n = n.min(open_files_limit().saturating_sub(200));
    let openers: Vec<_> = (0..threads)
        .map(|_| {
            let addr = addr.to_string();
            std::thread::spawn(move || {
                (0..n / threads)
                    .map(|_| TcpStream::connect(&addr).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    openers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect()
}

/// This process's limit on open files.
fn open_files_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit on this process, with a valid struct.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    limit.rlim_cur
}

#[test]
fn ten_thousand_idle_connections_from_one_host_do_not_stop_service() {
    let s = server::start(
        &["people"],
        &[
            "--max-connections",
            "1000",
            "--max-connections-per-address",
            "100",
            // Idle connections stay for the whole test: only the per-address limit acts.
            "--header-timeout-ms",
            "120000",
        ],
    );
    let addr = s.addr();
    // As many as this process may open, up to 10,000 (the figure is printed).
    let start = Instant::now();
    let idle = open_idle(&addr, 10_000, 8);
    let n = idle.len();
    let opened = start.elapsed();
    // Another host is served, at once, every time.
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let t = Instant::now();
        assert_eq!(health_from("127.0.0.2", &addr), 200);
        slowest = slowest.max(t.elapsed());
    }
    // The idle host itself is past its places: a new connection of its own is closed unserved.
    let own = health_from("127.0.0.1", &addr);
    let rss = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).unwrap();
    let rss = rss
        .lines()
        .find(|l| l.starts_with("VmRSS"))
        .unwrap_or("")
        .to_string();
    eprintln!(
        "{n} idle connections opened in {opened:?}; another host served 20 times, the slowest \
         in {slowest:?}; the server's {rss}"
    );
    assert!(n >= 1000, "only {n} files may be opened here");
    assert!(slowest < Duration::from_millis(500), "{slowest:?}");
    assert_eq!(own, 0, "the idle host got a place past its 100");
    // Once they close, the host is served again.
    drop(idle);
    let start = Instant::now();
    while health_from("127.0.0.1", &addr) != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "not served again"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn idle_connections_past_the_connection_limit_make_room_for_new_clients() {
    // No per-address limit: idle connections from any number of hosts look like these.
    let s = server::start(
        &["people"],
        &[
            "--max-connections",
            "200",
            // Idle connections would hold their places for the whole test.
            "--header-timeout-ms",
            "120000",
        ],
    );
    let addr = s.addr();
    let idle = open_idle(&addr, 2_000, 4);
    // Every new client is served promptly, each time making room by closing an idle one.
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let t = Instant::now();
        assert_eq!(health_from("127.0.0.2", &addr), 200);
        slowest = slowest.max(t.elapsed());
    }
    let closed = counter(&s, "datalith_connections_closed_for_room_total");
    eprintln!(
        "{} idle connections against 200 places; 20 new clients, the slowest served in \
         {slowest:?}; {closed} idle connections closed for room",
        idle.len()
    );
    assert!(
        idle.len() >= 1000,
        "only {} files may be opened here",
        idle.len()
    );
    // The first waits while the connections queued before it each take an idle one's
    // place (1,800 of them in ~0.5 s, debug build); without room made, until the header
    // timeout (120 s).
    assert!(slowest < Duration::from_secs(5), "{slowest:?}");
    assert!(closed >= 20, "{closed}");
}

/// The text of `/metrics`' counter `name`.
fn counter(s: &server::Server, name: &str) -> u64 {
    let text = send("GET", &s.url("/metrics"), &[], None).body;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

#[test]
fn a_client_that_stops_reading_a_large_answer_is_cut_off_while_others_are_served() {
    let s = server::start(&["people"], &["--send-timeout-ms", "2000"]);
    // About 20 MB of EDN, made by the query itself: far more than the sockets' buffers.
    let query = r#"{:query "[:find ?x ?s :where [(range 0 300000) [?x ...]] [(str \"row-\" ?x \"-abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz\") ?s]]"}"#;
    let request = format!(
        "POST /db/people/q HTTP/1.1\r\nHost: x\r\nContent-Type: application/edn\r\n\
         Content-Length: {}\r\n\r\n{query}",
        query.len()
    );
    let mut stalled = TcpStream::connect(s.addr()).unwrap();
    stalled.write_all(request.as_bytes()).unwrap();
    let asked = Instant::now();
    // Others are served at once while its writes wait.
    let mut slowest = Duration::ZERO;
    while asked.elapsed() < Duration::from_millis(4000) {
        let t = Instant::now();
        assert_eq!(send("GET", &s.url("/health"), &[], None).status, 200);
        slowest = slowest.max(t.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(slowest < Duration::from_millis(500), "{slowest:?}");
    // Cut off: reading now finds what the sockets held, then the end, without the chunked
    // answer's last chunk.
    let deadline = Instant::now() + Duration::from_secs(20);
    while counter(&s, "datalith_send_timeouts_total") == 0 {
        assert!(
            Instant::now() < deadline,
            "the stalled connection was not cut off"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let cut_after = asked.elapsed();
    stalled
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match stalled.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        &got[..got.len().min(200)]
    );
    assert!(
        !got.ends_with(b"0\r\n\r\n"),
        "the whole answer came: {} bytes",
        got.len()
    );
    // The same answer for a client that reads it: whole, to its last chunk.
    let mut reader = TcpStream::connect(s.addr()).unwrap();
    reader.write_all(request.as_bytes()).unwrap();
    reader
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut whole = Vec::new();
    while !whole.ends_with(b"0\r\n\r\n") {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => whole.extend_from_slice(&buf[..n]),
        }
    }
    assert!(
        whole.ends_with(b"}\n\r\n0\r\n\r\n"),
        "{} bytes",
        whole.len()
    );
    assert!(got.len() < whole.len(), "{} of {}", got.len(), whole.len());
    eprintln!(
        "cut off after {cut_after:?} (timeout 2 s, answer asked for at 0), {} of {} bytes read",
        got.len(),
        whole.len()
    );
}
