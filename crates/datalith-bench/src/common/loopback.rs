//! The floor under every `--remote` figure: one TCP round trip over loopback between two
//! threads of this process (100 bytes each way, `TCP_NODELAY`), with no HTTP, no parsing and
//! no work. A request to the server cannot come back faster than this; on a VM whose idle
//! CPUs wake slowly, it is most of what a small request costs (measured here: ~17 us with
//! both threads on one CPU, ~75 us p50 when they float over the two).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

use super::BenchError;

/// Bytes each way.
const MESSAGE: usize = 100;
/// Round trips timed, after [`WARM_UP`] untimed ones (about half a second here).
const TRIPS: usize = 5_000;
const WARM_UP: usize = 500;

/// Round-trip times, microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floor {
    pub p10_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
}

impl Floor {
    /// One line for a summary.
    pub fn sentence(&self) -> String {
        format!(
            "a TCP round trip over loopback between two threads, {MESSAGE} bytes each way and \
             no work, measured in this run: p50 {:.1} us (p10 {:.1}, p90 {:.1}, {TRIPS} trips)",
            self.p50_us, self.p10_us, self.p90_us
        )
    }
}

/// The floor of the pass whose round trip is the median one (a run measures one a pass).
pub fn median(mut floors: Vec<Floor>) -> Option<Floor> {
    floors.sort_by(|a, b| a.p50_us.total_cmp(&b.p50_us));
    floors.get(floors.len() / 2).copied()
}

/// Measures [`Floor`] now.
pub fn measure() -> Result<Floor, BenchError> {
    let io = |op: &'static str| BenchError::store("loopback floor", op);
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io("bind"))?;
    let addr = listener.local_addr().map_err(io("address"))?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = listener.accept()?;
        s.set_nodelay(true)?;
        let mut buf = [0u8; MESSAGE];
        for _ in 0..WARM_UP + TRIPS {
            s.read_exact(&mut buf)?;
            s.write_all(&buf)?;
        }
        Ok(())
    });
    let mut c = TcpStream::connect(addr).map_err(io("connect"))?;
    c.set_nodelay(true).map_err(io("nodelay"))?;
    let mut buf = [7u8; MESSAGE];
    let mut us = Vec::with_capacity(TRIPS);
    for i in 0..WARM_UP + TRIPS {
        let t = Instant::now();
        c.write_all(&buf).map_err(io("write"))?;
        c.read_exact(&mut buf).map_err(io("read"))?;
        if i >= WARM_UP {
            us.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    echo.join()
        .map_err(|_| io("echo")(std::io::Error::other("the echo thread panicked")))?
        .map_err(io("echo"))?;
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((us.len() - 1) as f64 * q).round() as usize];
    Ok(Floor {
        p10_us: at(0.1),
        p50_us: at(0.5),
        p90_us: at(0.9),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_is_measured_and_ordered() {
        let f = measure().unwrap();
        assert!(
            f.p10_us > 0.0 && f.p10_us <= f.p50_us && f.p50_us <= f.p90_us,
            "{f:?}"
        );
        assert!(f.sentence().contains("p50"));
    }
}
