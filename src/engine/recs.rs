//! The express engine's records, laid out for the whole id space: an array whose
//! allocation holds an element for every `u32` ([`SPACE`]), whatever the run uses, so that
//! an index, taken as the `u32` every engine id is, is inside it. Element access then needs
//! no bounds check and is sound whatever the index: a wrong one reads or writes a wrong
//! record, never memory outside the array. (WebAssembly engines keep 32-bit addresses in
//! bounds the same way.) The elements past the run's own are all-zero bytes (valid for the
//! plain records stored here, [`Zeroed`]) on pages that are never touched, so the space
//! costs address space (about 1 TB a run in all), not memory. Tests build with the
//! `checked` feature, where an index past the run's own elements panics, as a `Vec`'s
//! would.
//!
//! Where the system will not map that much (`vm.overcommit_memory = 2`, `ulimit -v`,
//! valgrind), `Recs::zeroed` says so and the run goes on the general engine, to the same
//! results. [`Store`] holds the flit slots: a `Recs` where it can be, which the express
//! engine takes for its run, else an ordinary allocation.
//!
//! A `Recs` is indexed by an id type of its own ([`RecId`]: the express engine's VC,
//! channel, switch and slot ids), so that an id of one kind cannot index the records of
//! another.
//!
//! Why: checking every access of the records costs 10 % of the instructions of the
//! reference workloads (docs/performance.md, "sound indexing").

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Index, IndexMut};
use std::ptr::NonNull;

/// Elements in every allocation: one for every `u32`, the type of the engine's ids. (Built
/// with the `narrow-recs` feature, for tools that cannot map that much, such as valgrind:
/// 2^24, with every index masked to it, at the cost of an instruction an access.)
#[cfg(not(feature = "narrow-recs"))]
pub(crate) const SPACE: usize = 1 << 32;
#[cfg(feature = "narrow-recs")]
pub(crate) const SPACE: usize = 1 << 24;

/// Index `i` into the space.
#[inline(always)]
fn within(i: usize) -> usize {
    if cfg!(feature = "narrow-recs") {
        i & (SPACE - 1)
    } else {
        i as u32 as usize
    }
}

/// A type whose all-zero bytes are a valid value (integers, `bool`s, and records of them).
///
/// # Safety
/// Implement it only for such types.
pub(crate) unsafe trait Zeroed: Copy {}

// SAFETY: integers are valid for every bit pattern.
unsafe impl Zeroed for u32 {}
// SAFETY: as above.
unsafe impl Zeroed for u64 {}
// SAFETY: arrays of such types are valid as zero bytes too.
unsafe impl<T: Zeroed, const N: usize> Zeroed for [T; N] {}

/// Whether the system gives the address space of a record array of the largest records
/// (64 bytes): the express engine can run.
pub(crate) fn space_available() -> bool {
    Recs::<[u64; 8]>::zeroed(0).is_some()
}

/// What indexes a [`Recs`]: an id, its number taken as a `u32` ([`within`]; ids are
/// `u32`s, so this costs nothing), or a plain `usize`.
pub(crate) trait RecId: Copy {
    fn raw(self) -> usize;
}

impl RecId for usize {
    #[inline(always)]
    fn raw(self) -> usize {
        self
    }
}

/// An array of `len` elements in an allocation of [`SPACE`] (see the module doc), indexed
/// by ids of type `I`.
pub(crate) struct Recs<T: Zeroed, I: RecId = usize> {
    ptr: NonNull<T>,
    len: usize,
    /// Bytes from the mapping's start to the first element (see [`color`]).
    off: usize,
    id: PhantomData<fn(I)>,
}

// SAFETY: a `Recs` owns its elements as a `Box<[T]>` does.
unsafe impl<T: Zeroed + Send, I: RecId> Send for Recs<T, I> {}

impl<T: Zeroed, I: RecId> Recs<T, I> {
    /// The mapping's size [bytes]: the space, and room to start it off the mapping's start.
    const BYTES: usize = SPACE * std::mem::size_of::<T>() + MAX_COLOR;

    /// `len` all-zero elements; `None` if `len` exceeds the space or the system will not
    /// give the address space.
    pub(crate) fn zeroed(len: usize) -> Option<Recs<T, I>> {
        const {
            assert!(std::mem::size_of::<T>() > 0);
            assert!(std::mem::align_of::<T>() <= 64);
        };
        if len > SPACE {
            return None;
        }
        let m = map_zeroed(Self::BYTES)?;
        let off = color();
        // SAFETY: `off` is within the mapping (`MAX_COLOR` past the space), a multiple of
        // 64 and so of `T`'s alignment (at most 64: above).
        let p = unsafe { m.add(off) }.cast::<T>();
        // Only the run's own part onto huge pages.
        crate::memory::advise_huge(p.as_ptr().cast(), len * std::mem::size_of::<T>());
        Some(Recs {
            ptr: p,
            len,
            off,
            id: PhantomData,
        })
    }

    /// The elements of `v`, as [`Self::zeroed`].
    pub(crate) fn from_vec(v: Vec<T>) -> Option<Recs<T, I>> {
        let mut r = Self::zeroed(v.len())?;
        r.copy_from_slice(&v);
        Some(r)
    }
}

/// The most bytes an array starts past its mapping's start.
const MAX_COLOR: usize = 1 << 16;

/// Where the next array starts past its mapping's start [bytes]: a different cache line of
/// a 64 KB span for each (a multiple of 67 lines), since mappings start at page boundaries
/// as far apart as their sizes, powers of two, and element i of every array would
/// otherwise fall in the same cache set (docs/performance.md).
fn color() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    (n * 67 % (MAX_COLOR / 64)) * 64
}

/// `bytes` of zeroed, page-aligned memory whose pages the system gives only as they are
/// first touched (an anonymous private mapping, not counted against the commit limit
/// where the system allows).
#[cfg(unix)]
fn map_zeroed(bytes: usize) -> Option<NonNull<u8>> {
    // SAFETY: a new anonymous mapping, at an address of the system's choosing; the result
    // is checked for failure.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(p.cast())
}

#[cfg(not(unix))]
fn map_zeroed(_: usize) -> Option<NonNull<u8>> {
    None
}

impl<T: Zeroed, I: RecId> Recs<T, I> {
    /// Back to a [`Store`] (the same memory: its elements are not moved).
    pub(crate) fn into_store(self) -> Store<T> {
        let s = Store {
            ptr: self.ptr,
            len: self.len,
            cap: self.off,
            mapped: true,
        };
        std::mem::forget(self);
        s
    }
}

/// An array of plain records that is a [`Recs`] where the system gives the address space,
/// and an ordinary allocation of its length where not: the engine's flit slots, which the
/// general engine reads with every access checked, and which the express engine takes as
/// a [`Recs`] for its run (`into_recs`) and gives back.
pub(crate) struct Store<T: Zeroed> {
    ptr: NonNull<T>,
    len: usize,
    /// A `Vec`'s capacity; where mapped, the `Recs`'s `off`.
    cap: usize,
    mapped: bool,
}

// SAFETY: as for `Recs`.
unsafe impl<T: Zeroed + Send> Send for Store<T> {}

impl<T: Zeroed> Default for Store<T> {
    fn default() -> Self {
        Store::from_vec(Vec::new())
    }
}

impl<T: Zeroed> Store<T> {
    /// `len` all-zero elements, mapped if the system allows (see [`Recs`]); else an
    /// allocation of their size, `None` if even that fails.
    pub(crate) fn zeroed(len: usize) -> Option<Store<T>> {
        if let Some(r) = Recs::<T>::zeroed(len) {
            return Some(r.into_store());
        }
        let layout = std::alloc::Layout::array::<T>(len).ok()?;
        if layout.size() == 0 {
            return Some(Store::default());
        }
        // SAFETY: the layout is non-empty; a null pointer (allocation failure) is checked.
        let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
        NonNull::new(p)?;
        // SAFETY: allocated by the global allocator with the layout of `len` elements, all
        // valid as zero bytes (`Zeroed`).
        Some(Store::from_vec(unsafe { Vec::from_raw_parts(p, len, len) }))
    }

    fn from_vec(v: Vec<T>) -> Store<T> {
        let mut v = std::mem::ManuallyDrop::new(v);
        Store {
            // SAFETY: a `Vec`'s pointer is never null.
            ptr: unsafe { NonNull::new_unchecked(v.as_mut_ptr()) },
            len: v.len(),
            cap: v.capacity(),
            mapped: false,
        }
    }

    /// The elements as a [`Recs`], if they are mapped; else `self` back.
    pub(crate) fn into_recs<I: RecId>(self) -> Result<Recs<T, I>, Store<T>> {
        if !self.mapped {
            return Err(self);
        }
        // SAFETY: mapped; `self` is forgotten, so the `Recs` is the one owner.
        let r = unsafe { self.mapping() };
        std::mem::forget(self);
        Ok(r)
    }

    /// The mapping as the [`Recs`] it was made as.
    ///
    /// # Safety
    /// `self` must be mapped, and the result or `self` (not both) may drop the mapping.
    unsafe fn mapping<I: RecId>(&self) -> Recs<T, I> {
        debug_assert!(self.mapped);
        Recs {
            ptr: self.ptr,
            len: self.len,
            off: self.cap,
            id: PhantomData,
        }
    }

    /// Appends `x` (a mapped store has room for every `u32` index; an allocation grows).
    pub(crate) fn push(&mut self, x: T) {
        if self.mapped && self.len == SPACE {
            // The space is full: an ordinary allocation from here on.
            *self = Store::from_vec(self.to_vec());
        }
        if self.mapped {
            // SAFETY: inside the mapping (`len < SPACE`), which `self` owns.
            unsafe { self.ptr.as_ptr().add(self.len).write(x) };
            self.len += 1;
        } else {
            self.as_vec(|v| v.push(x));
        }
    }

    /// Makes it `n` elements long, new ones `x`.
    pub(crate) fn resize(&mut self, n: usize, x: T) {
        // (Plain records: nothing to drop.)
        self.len = self.len.min(n);
        while self.len < n {
            self.push(x);
        }
    }

    /// Runs `f` on the allocation as the `Vec` it is (not mapped).
    fn as_vec(&mut self, f: impl FnOnce(&mut Vec<T>)) {
        debug_assert!(!self.mapped);
        // SAFETY: not mapped: the raw parts of a `Vec`, taken back and given back after.
        let mut v = unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.len, self.cap) };
        f(&mut v);
        *self = Store::from_vec(v);
    }

    /// Asks the processor to bring element `i` into the cache ahead of its use (a hint: no
    /// effect on results, and none at all off x86-64).
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        crate::memory::prefetch(self.ptr.as_ptr().wrapping_add(i));
    }
}

impl<T: Zeroed> Drop for Store<T> {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: mapped, and `self` goes without dropping it otherwise.
            drop(unsafe { self.mapping::<usize>() });
        } else {
            // SAFETY: the raw parts of a `Vec` (`from_vec`), dropped once.
            drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.len, self.cap) });
        }
    }
}

impl<T: Zeroed> Deref for Store<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` elements are initialised and owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroed> DerefMut for Store<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, borrowed mutably with `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroed> Index<usize> for Store<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &(**self)[i]
    }
}

impl<T: Zeroed> IndexMut<usize> for Store<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut (**self)[i]
    }
}

impl<T: Zeroed + std::fmt::Debug> std::fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Zeroed, I: RecId> Drop for Recs<T, I> {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: the mapping of `BYTES` made in `zeroed`, `off` bytes before the first
        // element, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast::<u8>().sub(self.off).cast(), Self::BYTES);
        }
    }
}

impl<T: Zeroed, I: RecId> Deref for Recs<T, I> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` elements are initialised (zeroed, then written as `T`s)
        // and owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroed, I: RecId> DerefMut for Recs<T, I> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, borrowed mutably with `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroed, I: RecId> Recs<T, I> {
    /// Asks the processor to bring record `i` into the cache ahead of its use (a hint: no
    /// effect on results, and none at all off x86-64). Any id will do: a prefetch never
    /// faults, and `within` keeps the address inside the mapping.
    #[inline(always)]
    pub(crate) fn prefetch(&self, i: I) {
        crate::memory::prefetch(self.ptr.as_ptr().wrapping_add(within(i.raw())));
    }
}

impl<T: Zeroed, I: RecId> Index<I> for Recs<T, I> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: I) -> &T {
        let i = i.raw();
        #[cfg(feature = "checked")]
        assert!(i < self.len, "index {i} past {} records", self.len);
        // SAFETY: `within(i)` is below `SPACE`, the allocation's length; every element is
        // a valid `T` (zeroed, `Zeroed`, or written since) and owned by `self`.
        unsafe { &*self.ptr.as_ptr().add(within(i)) }
    }
}

impl<T: Zeroed, I: RecId> IndexMut<I> for Recs<T, I> {
    #[inline(always)]
    fn index_mut(&mut self, i: I) -> &mut T {
        let i = i.raw();
        #[cfg(feature = "checked")]
        assert!(i < self.len, "index {i} past {} records", self.len);
        // SAFETY: as above, borrowed mutably with `self`.
        unsafe { &mut *self.ptr.as_ptr().add(within(i)) }
    }
}

impl<T: Zeroed + std::fmt::Debug, I: RecId> std::fmt::Debug for Recs<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_as_written_and_stop_at_their_length() {
        let mut r = Recs::<u64>::from_vec(vec![5, 6, 7]).unwrap();
        assert_eq!(r.len(), 3);
        r[1] += 10;
        assert_eq!(&*r, &[5, 16, 7]);
        let z = Recs::<u32>::zeroed(1000).unwrap();
        assert!(z.iter().all(|&x| x == 0));
        // Tests check every index against the length, as a `Vec` does.
        assert!(std::panic::catch_unwind(|| r[3]).is_err());
        assert!(Recs::<u32>::zeroed(SPACE + 1).is_none());
    }
}
