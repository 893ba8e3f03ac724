//! Connections per client address (`--max-connections-per-address`): one host holding
//! idle connections (or opening thousands) can take at most that many of the
//! `--max-connections` places; its connections past them are closed as soon as they are
//! accepted, so they never wait in the queue in front of other clients' connections.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// The connections open per address.
pub struct AddressSlots {
    max: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection's place among its address's; given back when dropped.
pub struct Slot {
    slots: Arc<AddressSlots>,
    ip: IpAddr,
}

impl AddressSlots {
    /// At most `max` connections an address (0: no limit).
    pub fn new(max: usize) -> Arc<AddressSlots> {
        Arc::new(AddressSlots {
            max,
            open: Mutex::new(HashMap::new()),
        })
    }

    /// A place for one more connection from `ip`, or `None` when it has all its places.
    pub fn take(self: &Arc<Self>, ip: IpAddr) -> Option<Slot> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(ip).or_insert(0);
        if self.max > 0 && *n >= self.max {
            return None;
        }
        *n += 1;
        Some(Slot {
            slots: self.clone(),
            ip,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                // Addresses seen once do not stay in the table.
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_gets_its_places_and_no_more_and_they_come_back() {
        let slots = AddressSlots::new(2);
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "::1".parse().unwrap());
        let first = slots.take(a).unwrap();
        let _second = slots.take(a).unwrap();
        assert!(slots.take(a).is_none());
        let _other = slots.take(b).unwrap();
        drop(first);
        assert!(slots.take(a).is_some());
        let unlimited = AddressSlots::new(0);
        let held: Vec<Slot> = (0..1000).filter_map(|_| unlimited.take(a)).collect();
        assert_eq!(held.len(), 1000);
        drop(held);
        assert!(unlimited.open.lock().unwrap().is_empty());
    }
}
