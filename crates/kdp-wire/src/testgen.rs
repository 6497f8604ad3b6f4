//! Random values of declared messages, valid for one version, for property
//! tests that hold every declared message to another implementation's
//! bytes. `#[kafka]` implements [`Random`] for each declared struct.
//!
//! A splitmix64 stream: tests seed it from proptest, so a failure prints the
//! seed that reproduces it.

use crate::codec::Uuid;
use crate::version::Version;

/// A deterministic stream of random numbers.
#[derive(Debug, Clone)]
pub struct Gen {
    state: u64,
    depth: u32,
}

impl Gen {
    /// A stream from a seed.
    pub fn new(seed: u64) -> Self {
        Gen {
            state: seed,
            depth: 0,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// A length for a string, bytes or array: mostly short, sometimes empty;
    /// arrays nested deeper get fewer elements so values stay small.
    fn len(&mut self) -> usize {
        let max = match self.depth {
            0 | 1 => 4,
            2 => 3,
            _ => 2,
        };
        self.below(max + 1) as usize
    }

    /// Random bytes.
    pub fn bytes(&mut self) -> Vec<u8> {
        let n = self.len() * 3;
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// A random string, sometimes with multi-byte characters.
    pub fn string(&mut self) -> String {
        const CHARS: &[char] = &['a', 'Z', '0', '-', '_', '.', ' ', 'é', '€', '😀'];
        let n = self.len() * 2;
        (0..n)
            .map(|_| CHARS[self.below(CHARS.len() as u64) as usize])
            .collect()
    }
}

/// A random value valid in version `v`; `nullable` says whether null (an
/// `Option`'s `None`) is allowed there.
pub trait Random: Sized {
    /// See the trait.
    fn random(g: &mut Gen, v: Version, nullable: bool) -> Self;
}

macro_rules! random_int {
    ($($ty:ty),*) => {$(
        impl Random for $ty {
            fn random(g: &mut Gen, _v: Version, _nullable: bool) -> Self {
                // Edge values often: they are where encoders go wrong.
                match g.below(4) {
                    0 => <$ty>::MIN,
                    1 => <$ty>::MAX,
                    2 => (g.below(3) as $ty).wrapping_sub(1),
                    _ => g.next_u64() as $ty,
                }
            }
        }
    )*};
}

random_int!(i8, i16, i32, i64, u16, u32);

impl Random for crate::error_code::ErrorCode {
    fn random(g: &mut Gen, v: Version, nullable: bool) -> Self {
        crate::error_code::ErrorCode(i16::random(g, v, nullable))
    }
}

impl Random for bool {
    fn random(g: &mut Gen, _v: Version, _nullable: bool) -> Self {
        g.one_in(2)
    }
}

impl Random for Uuid {
    fn random(g: &mut Gen, _v: Version, _nullable: bool) -> Self {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&g.next_u64().to_be_bytes());
        b[8..].copy_from_slice(&g.next_u64().to_be_bytes());
        Uuid(b)
    }
}

impl Random for String {
    fn random(g: &mut Gen, _v: Version, _nullable: bool) -> Self {
        g.string()
    }
}

impl<T: Random> Random for Vec<T> {
    fn random(g: &mut Gen, v: Version, _nullable: bool) -> Self {
        let n = g.len();
        g.depth += 1;
        let out = (0..n).map(|_| T::random(g, v, false)).collect();
        g.depth -= 1;
        out
    }
}

impl<T: Random> Random for Option<T> {
    fn random(g: &mut Gen, v: Version, nullable: bool) -> Self {
        if nullable && g.one_in(4) {
            None
        } else {
            Some(T::random(g, v, false))
        }
    }
}
