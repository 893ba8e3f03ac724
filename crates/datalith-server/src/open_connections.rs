//! The open connections and what each is doing, so that when every `--max-connections` place
//! is taken and another client connects, the connection idle the longest is asked to close
//! (as nginx reuses its idle keep-alive connections): idle connections, from one host or from
//! many, then cost a newcomer one close instead of a wait for the header timeout.
//!
//! A connection is idle while no request of it runs: between keep-alive requests, and before
//! its first request's headers are complete. A connection asked to close ends through hyper's
//! graceful shutdown: closed at once when idle, after its response otherwise (a request that
//! began meanwhile is answered). One running a request is never asked; when every connection
//! runs one, the newcomer waits for a place as before.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use axum::Extension;
use tokio::sync::Notify;

/// Every open connection's [`Activity`].
#[derive(Default)]
pub struct OpenConnections {
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    /// Connections asked to close to make room, for `/metrics`.
    pub closed_for_room: Arc<AtomicU64>,
}

/// What one connection is doing.
pub struct Activity {
    epoch: Instant,
    /// Requests of the connection running now.
    running: AtomicU32,
    /// When a request last began or ended (or the connection opened), in µs since `epoch`.
    last_change_us: AtomicU64,
    /// Set once the connection has been asked to close.
    asked: AtomicBool,
    /// Wakes the connection's task to close it.
    pub close: Notify,
}

impl OpenConnections {
    /// Records a new connection; it is forgotten when the returned guard drops.
    pub fn open(self: &Arc<Self>) -> (Arc<Activity>, Registered) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity {
            epoch: Instant::now(),
            running: AtomicU32::new(0),
            last_change_us: AtomicU64::new(0),
            asked: AtomicBool::new(false),
            close: Notify::new(),
        });
        self.lock().insert(id, activity.clone());
        let registered = Registered {
            all: self.clone(),
            id,
        };
        (activity, registered)
    }

    /// Asks the connection idle the longest to close; false when every connection runs a
    /// request (or was asked already).
    pub fn close_idlest(&self) -> bool {
        let now = Instant::now();
        let idlest = self
            .lock()
            .values()
            .filter(|a| a.running.load(Ordering::Acquire) == 0 && !a.asked.load(Ordering::Relaxed))
            .max_by_key(|a| a.idle_for_us(now))
            .cloned();
        let Some(victim) = idlest else {
            return false;
        };
        victim.asked.store(true, Ordering::Relaxed);
        // `notify_one` keeps the wake-up for a task not waiting yet.
        victim.close.notify_one();
        self.closed_for_room.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Activity {
    fn idle_for_us(&self, now: Instant) -> u64 {
        let at = self.last_change_us.load(Ordering::Relaxed);
        (now.duration_since(self.epoch).as_micros() as u64).saturating_sub(at)
    }

    fn touch(&self) {
        self.last_change_us
            .store(self.epoch.elapsed().as_micros() as u64, Ordering::Relaxed);
    }
}

/// Removes its connection from [`OpenConnections`] when dropped.
pub struct Registered {
    all: Arc<OpenConnections>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.all.lock().remove(&self.id);
    }
}

/// Middleware: marks the request's connection busy while the request runs (until its
/// response's head is ready: a streamed body goes out on an idle connection, which a close
/// lets finish).
pub async fn track(
    Extension(activity): Extension<Arc<Activity>>,
    request: Request,
    next: Next,
) -> Response {
    struct Running<'a>(&'a Activity);
    impl Drop for Running<'_> {
        fn drop(&mut self) {
            self.0.touch();
            self.0.running.fetch_sub(1, Ordering::Release);
        }
    }
    activity.running.fetch_add(1, Ordering::Acquire);
    activity.touch();
    let _running = Running(&activity);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idlest_connection_not_running_a_request_is_asked_once() {
        let all = Arc::new(OpenConnections::default());
        let (first, _r1) = all.open();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let (second, _r2) = all.open();
        let (third, r3) = all.open();
        // The oldest idle one runs a request: the next idlest is asked.
        first.running.store(1, Ordering::Relaxed);
        assert!(all.close_idlest());
        assert!(second.asked.load(Ordering::Relaxed));
        assert!(!first.asked.load(Ordering::Relaxed));
        // Asked once: the next call takes the third.
        assert!(all.close_idlest());
        assert!(third.asked.load(Ordering::Relaxed));
        // Only a busy connection is left unasked.
        assert!(!all.close_idlest());
        assert_eq!(all.closed_for_room.load(Ordering::Relaxed), 2);
        // A closed connection is forgotten.
        drop(r3);
        assert_eq!(all.lock().len(), 2);
    }
}
