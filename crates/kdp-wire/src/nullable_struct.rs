//! A struct field the schema makes nullable (`"nullableVersions"` on a
//! field whose type is a struct, e.g. StreamsGroupDescribe's `Topology`
//! and `UserEndpoint`). Kafka's generated code writes one `int8` before
//! it: -1 for null, 1 followed by the struct. Strings and arrays are null
//! through their length prefix instead, and are plain `Option`s.

use bytes::BufMut;

use crate::codec::Reader;
use crate::error::DecodeError;
use crate::testgen::{Gen, Random};
use crate::version::Version;
use crate::view::{Cursor, Viewable};
use crate::wire::Wire;

/// A nullable struct: `None` is null on the wire.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct NullableStruct<T>(pub Option<T>);

impl<T> Default for NullableStruct<T> {
    fn default() -> Self {
        NullableStruct(None)
    }
}

impl<T> NullableStruct<T> {
    /// The struct, if not null.
    pub fn as_ref(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<T: Wire> Wire for NullableStruct<T> {
    const WHAT: &'static str = "struct";
    fn min_len(_v: Version) -> usize {
        1
    }
    fn wire_len(&self, v: Version) -> usize {
        1 + self.0.as_ref().map_or(0, |s| s.wire_len(v))
    }
    fn put<B: BufMut>(&self, buf: &mut B, v: Version) {
        match &self.0 {
            None => buf.put_i8(-1),
            Some(s) => {
                buf.put_i8(1);
                s.put(buf, v);
            }
        }
    }
    fn read(r: &mut Reader<'_>, v: Version) -> Result<Self, DecodeError> {
        if r.struct_marker()? {
            T::read(r, v).map(|s| NullableStruct(Some(s)))
        } else {
            Ok(NullableStruct(None))
        }
    }
}

impl<T: Viewable> Viewable for NullableStruct<T> {
    type View<'a> = Option<T::View<'a>>;

    fn check(r: &mut Reader<'_>, v: Version) -> Result<bool, DecodeError> {
        if r.struct_marker()? {
            T::check(r, v)
        } else {
            Ok(false)
        }
    }
    fn view<'a>(c: &Cursor<'a>, v: Version) -> Self::View<'a> {
        let mut c = *c;
        (c.i8() == 1).then(|| T::view(&c, v))
    }
    fn skip(c: &mut Cursor<'_>, v: Version) {
        if c.i8() == 1 {
            T::skip(c, v);
        }
    }
    fn absent<'a>(_default: &Self, _v: Version) -> Self::View<'a> {
        // Every nullable struct's schema default is null.
        None
    }
    fn owned(view: Self::View<'_>, v: Version) -> Self {
        NullableStruct(view.map(|s| T::owned(s, v)))
    }
}

impl<T: Random> Random for NullableStruct<T> {
    // Null is valid wherever the type is used: the type is the schema's
    // nullability, so the caller's flag does not apply.
    fn random(g: &mut Gen, v: Version, _nullable: bool) -> Self {
        if g.one_in(4) {
            NullableStruct(None)
        } else {
            NullableStruct(Some(T::random(g, v, false)))
        }
    }
}
