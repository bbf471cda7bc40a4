//! A bounded associative table, the model of the Penn reassembler's content-addressable
//! memories (256 virtual circuits, 256 datagrams in reassembly at once: `shared/systems/atm.md`).
//!
//! Entries are kept sorted by key and found by binary search: look-ups are deterministic and
//! allocation-free once the table has grown, and no hashing is involved.

/// A table of at most `capacity` entries keyed by `K`.
#[derive(Debug, Clone)]
pub(crate) struct Cam<K, V> {
    entries: Vec<(K, V)>,
    capacity: usize,
}

/// The table already holds `capacity` entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Full;

impl<K: Ord + Copy, V> Cam<K, V> {
    pub(crate) fn new(capacity: usize) -> Self {
        Cam {
            entries: Vec::new(),
            capacity,
        }
    }

    fn position(&self, key: K) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(&key))
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }

    pub(crate) fn get_mut(&mut self, key: K) -> Option<&mut V> {
        match self.position(key) {
            Ok(i) => Some(&mut self.entries[i].1),
            Err(_) => None,
        }
    }

    /// Inserts or replaces the entry for `key`; a new key needs a free slot.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Result<(), Full> {
        match self.position(key) {
            Ok(i) => self.entries[i].1 = value,
            Err(_) if self.is_full() => return Err(Full),
            Err(i) => self.entries.insert(i, (key, value)),
        }
        Ok(())
    }

    pub(crate) fn remove(&mut self, key: K) -> Option<V> {
        self.position(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// Removes every entry whose key fails `keep`; returns how many went.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) -> usize {
        let before = self.entries.len();
        self.entries.retain(|(k, _)| keep(k));
        before - self.entries.len()
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.entries.iter().map(|(k, _)| *k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_is_enforced_for_new_keys_only() {
        let mut cam = Cam::new(2);
        assert_eq!(cam.insert(3, 'a'), Ok(()));
        assert_eq!(cam.insert(1, 'b'), Ok(()));
        assert_eq!(cam.insert(2, 'c'), Err(Full));
        assert_eq!(cam.insert(3, 'd'), Ok(()));
        assert_eq!(cam.get_mut(3), Some(&mut 'd'));
        assert_eq!(cam.keys().collect::<Vec<_>>(), [1, 3]);
        assert_eq!(cam.remove(1), Some('b'));
        assert_eq!(cam.get_mut(1), None);
        assert_eq!(cam.retain(|&k| k != 3), 1);
        assert_eq!(cam.len(), 0);
    }
}
