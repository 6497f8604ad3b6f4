//! How large an answer may grow, known before it is built: a request's
//! items each cost at least their smallest encoding in the answer, so a
//! request whose answer cannot fit is refused from its counts alone
//! ([`Budget::precheck`]); what is then built is charged entry by entry
//! ([`Budget::charge`]) and refused as soon as it is over. Either way no
//! answer is built much beyond the limit.

use kdp_wire::wire::{Version, Wire};

/// An answer that would encode to more than the client accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the response body would be at least {at_least} bytes, above the limit of {limit}")]
pub struct TooLarge {
    /// A lower bound of the body's encoded size (the whole answer was not built).
    pub at_least: usize,
    /// The limit it exceeds, in bytes.
    pub limit: usize,
}

/// The bytes an answer body may take, and what it certainly takes so far.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    limit: usize,
    total: usize,
}

impl Budget {
    /// An answer body of at most `limit` bytes.
    pub fn new(limit: usize) -> Budget {
        Budget { limit, total: 0 }
    }

    /// No limit (tests, and callers that bound the answer themselves).
    pub fn unlimited() -> Budget {
        Budget::new(usize::MAX)
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Refuses unless `bytes` more fit; does not count them. For a lower
    /// bound computed from the request before anything is built.
    pub fn precheck(&self, bytes: usize) -> Result<(), TooLarge> {
        let at_least = self.total.saturating_add(bytes);
        if at_least > self.limit {
            return Err(TooLarge {
                at_least,
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// [`Budget::precheck`] of a sum, item by item: refused at the first
    /// item that goes over, so the size reported is just above the limit
    /// and the rest of the request is not looked at.
    pub fn precheck_each(&self, sizes: impl IntoIterator<Item = usize>) -> Result<(), TooLarge> {
        let mut sum = 0usize;
        for size in sizes {
            sum = sum.saturating_add(size);
            self.precheck(sum)?;
        }
        Ok(())
    }

    /// Counts `bytes` more; refuses once over the limit.
    pub fn add(&mut self, bytes: usize) -> Result<(), TooLarge> {
        self.precheck(bytes)?;
        self.total = self.total.saturating_add(bytes);
        Ok(())
    }

    /// Counts one built entry's exact encoded size at `v`.
    pub fn charge<T: Wire>(&mut self, entry: &T, v: Version) -> Result<(), TooLarge> {
        self.add(entry.wire_len(v))
    }
}

/// The smallest encoding of `count` entries of `T` at `v`, plus `extra`
/// bytes (e.g. the strings the request names, which the answer echoes).
pub fn at_least<T: Wire>(count: usize, v: Version, extra: usize) -> usize {
    count.saturating_mul(T::min_len(v)).saturating_add(extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::messages::{Coordinator, FindCoordinatorResponse};

    #[test]
    fn refuses_from_counts_and_from_what_is_built() {
        let v = Version::of::<FindCoordinatorResponse>(4);
        // Key (1), NodeId (4), Host (1), Port (4), ErrorCode (2),
        // ErrorMessage (1), tags (1).
        assert_eq!(Coordinator::min_len(v), 14);
        let b = Budget::new(140);
        assert!(b.precheck(at_least::<Coordinator>(10, v, 0)).is_ok());
        let e = b.precheck(at_least::<Coordinator>(10, v, 1)).unwrap_err();
        assert_eq!((e.at_least, e.limit), (141, 140));
        let mut b = Budget::new(20);
        let c = Coordinator {
            host: "h".into(),
            ..Default::default()
        };
        b.charge(&c, v).unwrap();
        assert_eq!(b.charge(&c, v).unwrap_err().at_least, 30);
        // Item by item: refused at the first one over.
        let e = Budget::new(25).precheck_each([10; 100]).unwrap_err();
        assert_eq!(e.at_least, 30);
        assert!(Budget::new(30).precheck_each([10; 3]).is_ok());
    }
}
