//! [`TaggedView`]: a validated tagged-field section, raw.

use std::fmt;
use std::iter::FusedIterator;

use super::cursor::Cursor;

/// Every field of a tagged-field section, declared or not, as `(tag,
/// value bytes)` in ascending tag order. A struct's declared tagged fields
/// also have accessors of their own; `into_owned` keeps the others in
/// `unknown_tagged_fields`, as the owned decoder does.
#[derive(Clone, Copy)]
pub struct TaggedView<'a> {
    /// At the section's count; `None` outside flexible versions.
    section: Option<Cursor<'a>>,
}

impl<'a> TaggedView<'a> {
    /// The section at `c`.
    #[inline]
    pub(crate) fn at(c: Cursor<'a>) -> Self {
        TaggedView { section: Some(c) }
    }

    /// No section (a version that is not flexible).
    #[inline]
    pub(crate) fn none() -> Self {
        TaggedView { section: None }
    }

    /// How many fields the section has.
    pub fn len(&self) -> usize {
        self.iter().len()
    }

    /// True when the section is empty (as it almost always is).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of field `tag`, if present.
    pub fn get(&self, tag: u32) -> Option<&'a [u8]> {
        self.iter().find(|(t, _)| *t == tag).map(|(_, data)| data)
    }

    /// The fields, ascending by tag.
    pub fn iter(&self) -> TaggedIter<'a> {
        match self.section {
            Some(mut c) => {
                let left = c.uvarint32() as usize;
                TaggedIter { at: c, left }
            }
            None => TaggedIter {
                at: Cursor::new(&[]),
                left: 0,
            },
        }
    }
}

impl<'a> IntoIterator for TaggedView<'a> {
    type Item = (u32, &'a [u8]);
    type IntoIter = TaggedIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for TaggedView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The iterator of a [`TaggedView`].
#[derive(Debug, Clone)]
pub struct TaggedIter<'a> {
    at: Cursor<'a>,
    left: usize,
}

impl<'a> Iterator for TaggedIter<'a> {
    type Item = (u32, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        self.left = self.left.checked_sub(1)?;
        let tag = self.at.uvarint32();
        let size = self.at.uvarint32() as usize;
        Some((tag, self.at.take(size)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for TaggedIter<'_> {}

impl FusedIterator for TaggedIter<'_> {}
