//! The engine's arrays: a `Vec` of records indexed by engine ids (a VC, a channel, a ring
//! slot, a switch). Every access is checked, as a `Vec`'s is: an index is never read from
//! input, so the checks only ever pass, but a wrong one must stop the run, never reach
//! past the array. (The express engine's records, read on every hop, are laid out so that
//! no check is needed: `super::recs`.) Tests build with the `checked` feature (the crate's
//! dev-dependency on itself turns it on), which adds counters and checks of their own.

use std::ops::{Deref, DerefMut, Index, IndexMut};

#[derive(Clone, Debug, Default)]
pub(crate) struct Arr<T>(pub Vec<T>);

impl<T> Deref for Arr<T> {
    type Target = Vec<T>;
    #[inline(always)]
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> DerefMut for Arr<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T> From<Vec<T>> for Arr<T> {
    fn from(v: Vec<T>) -> Arr<T> {
        Arr(v)
    }
}

impl<T> Index<usize> for Arr<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.0[i]
    }
}

impl<T> IndexMut<usize> for Arr<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.0[i]
    }
}

impl<T> Arr<T> {
    /// Asks the processor to bring element `i` into the cache ahead of its use (a hint: no
    /// effect on results, and none at all off x86-64).
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        crate::memory::prefetch(self.0.as_ptr().wrapping_add(i));
    }
}

impl<'a, T> IntoIterator for &'a Arr<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Tests must build with every access checked.
    const _: () = assert!(cfg!(feature = "checked"), "tests need the `checked` feature");

    #[test]
    fn tests_run_with_every_access_checked() {
        let a = Arr(vec![1, 2, 3]);
        assert!(std::panic::catch_unwind(|| a[3]).is_err());
    }
}
