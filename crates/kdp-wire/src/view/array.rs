//! [`ArrayView`]: a validated array, its elements read where they lie.

use std::fmt;
use std::iter::FusedIterator;
use std::marker::PhantomData;

use super::cursor::Cursor;
use super::viewable::Viewable;
use crate::version::Version;

/// An array of `T` in validated bytes. Iterating yields each element's
/// view ([`Viewable::View`]); nothing is copied or allocated.
pub struct ArrayView<'a, T> {
    /// At the first element.
    first: Cursor<'a>,
    len: usize,
    v: Version,
    elem: PhantomData<fn() -> T>,
}

impl<'a, T: Viewable> ArrayView<'a, T> {
    /// `len` elements from `first`.
    #[inline]
    pub(crate) fn new(first: Cursor<'a>, len: usize, v: Version) -> Self {
        ArrayView {
            first,
            len,
            v,
            elem: PhantomData,
        }
    }

    /// An array of no elements.
    #[inline]
    pub fn empty(v: Version) -> Self {
        Self::new(Cursor::new(&[]), 0, v)
    }

    /// The element count.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements, in order.
    #[inline]
    pub fn iter(&self) -> ArrayIter<'a, T> {
        let v = self.v;
        // In a strided body the tag byte needs no look.
        let fixed = if v.flexible {
            T::trivial_body(v).map(|body| (body + 1, !self.first.strided()))
        } else {
            T::trivial_len(v).map(|len| (len, false))
        };
        let (mut at, mut left) = (self.first, self.len);
        if let Some((len @ 1.., false)) = fixed {
            // Every element takes `len` bytes: the cursor is cut to the
            // array's, so that each step checks only that one more is left.
            let all = at.rest();
            match len.checked_mul(left).and_then(|n| all.get(..n)) {
                Some(bytes) => at = at.over(bytes),
                // Only bytes a check refused are shorter: as many as fit
                // (out of line: no division on the way of valid bytes).
                None => (at, left) = cut_to_whole(at, len),
            }
        }
        ArrayIter {
            at,
            left,
            v,
            fixed,
            elem: PhantomData,
        }
    }
}

/// The whole elements of `len` bytes at `at` (`len` > 0): a cursor over
/// them and their count.
#[cold]
fn cut_to_whole(at: Cursor<'_>, len: usize) -> (Cursor<'_>, usize) {
    let all = at.rest();
    let left = all.len() / len.max(1);
    (at.over(all.get(..left * len).unwrap_or_default()), left)
}

impl<T> Clone for ArrayView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ArrayView<'_, T> {}

impl<'a, T: Viewable> IntoIterator for ArrayView<'a, T> {
    type Item = T::View<'a>;
    type IntoIter = ArrayIter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T: Viewable> IntoIterator for &ArrayView<'a, T> {
    type Item = T::View<'a>;
    type IntoIter = ArrayIter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Viewable> fmt::Debug for ArrayView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The iterator of an [`ArrayView`]: each step views the element at the
/// cursor and moves past it.
pub struct ArrayIter<'a, T> {
    at: Cursor<'a>,
    /// The elements left, but in a strided array (see `remaining`).
    left: usize,
    v: Version,
    /// The size of every element whose bytes are all valid (and whether it
    /// ends with a tag section that must be looked at: one that is not
    /// empty means the element is larger).
    fixed: Option<(usize, bool)>,
    elem: PhantomData<fn() -> T>,
}

impl<'a, T: Viewable> Iterator for ArrayIter<'a, T> {
    type Item = T::View<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let v = self.v;
        if let Some((len @ 1.., false)) = self.fixed {
            // The cursor holds exactly the elements left (see `iter`): one
            // check a step, and each element viewed over exactly its bytes,
            // which lets the compiler drop the accessors' bounds checks.
            let (element, rest) = self.at.rest().split_at_checked(len)?;
            let element = self.at.over(element);
            self.at = self.at.over(rest);
            return Some(T::view(&element, v));
        }
        self.left = self.left.checked_sub(1)?;
        // An element of known size (numbers; a struct of numbers with an
        // empty tag section, as nearly all are) is viewed over exactly its
        // bytes, which lets the compiler drop the accessors' bounds checks.
        if let Some((len, tagged)) = self.fixed {
            let at = self.at;
            let bytes = match at.rest().split_at_checked(len) {
                Some((element, rest)) if !tagged || element.last() == Some(&0) => {
                    self.at = at.over(rest);
                    element
                }
                // An element with tagged fields: viewed over the bytes from
                // it on, then walked past.
                Some(_) => {
                    if self.left > 0 {
                        self.at = skipped::<T>(self.at, v);
                    }
                    at.rest()
                }
                // Only bytes a check refused end early.
                None => {
                    self.left = 0;
                    return None;
                }
            };
            // Both ways hold `len` bytes at least; said once here, it lets
            // the compiler drop every bounds check of the accessors, which
            // it cannot prove through the merge of the two ways.
            if bytes.len() < len {
                self.left = 0;
                return None;
            }
            return Some(T::view(&at.over(bytes), v));
        }
        let item = T::view(&self.at, v);
        // Past the last element there is nothing to find: not walking it
        // spares a one-element array (and the last partition of a topic,
        // whose producers the caller is about to walk) a pass.
        if self.left > 0 {
            self.at = skipped::<T>(self.at, v);
        }
        Some(item)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.remaining();
        (left, Some(left))
    }
}

impl<T: Viewable> ExactSizeIterator for ArrayIter<'_, T> {}

impl<T: Viewable> FusedIterator for ArrayIter<'_, T> {}

/// The cursor past the element at `at`. By value: a skip out of line
/// given `&mut` to the iterator's own cursor would pin the whole iterator
/// in memory, and with it what the compiler knew of it (its version's
/// flexibility, the element size), reloaded at every step.
#[inline]
fn skipped<T: Viewable>(mut at: Cursor<'_>, v: Version) -> Cursor<'_> {
    T::skip(&mut at, v);
    at
}

impl<T> ArrayIter<'_, T> {
    /// How many elements are left: in a strided array, whose cursor holds
    /// exactly those (see `iter`), its length over their size, so that
    /// `next` keeps no count.
    #[inline]
    fn remaining(&self) -> usize {
        match self.fixed {
            Some((len @ 1.., false)) => self.at.rest().len() / len,
            _ => self.left,
        }
    }
}

impl<T> Clone for ArrayIter<'_, T> {
    fn clone(&self) -> Self {
        ArrayIter {
            at: self.at,
            left: self.left,
            v: self.v,
            fixed: self.fixed,
            elem: PhantomData,
        }
    }
}

impl<T> fmt::Debug for ArrayIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayIter")
            .field("left", &self.remaining())
            .finish_non_exhaustive()
    }
}
