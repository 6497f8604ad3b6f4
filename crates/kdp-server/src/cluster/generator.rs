//! A producer generator of the cluster file (`producer_generators`): what
//! it makes and when, as pure functions of the clock. Reading it from the
//! file and bringing the cluster to the present are in `generate`.

/// Ids each generator may use: `[first, first + BLOCK)`.
pub const BLOCK: i64 = 1_000_000_000;

/// How a generator makes producers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A new producer every `every_ms` from `start_ms` on (producer `k` at
    /// `start_ms + k * every_ms`), each writing once to one partition
    /// (round robin) and idle from then on.
    Churn {
        /// Time between two new producers.
        every_ms: i64,
        /// When producer 0 was made.
        start_ms: i64,
    },
    /// `count` producers writing to every partition, last `idle_ms` ago.
    Steady {
        /// How many.
        count: u32,
        /// Time since each last wrote.
        idle_ms: i64,
    },
}

/// One generator of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    /// The topic written.
    pub topic: String,
    /// Its partitions written (churning producers take them in turn).
    pub partitions: Vec<i32>,
    /// Churn or steady.
    pub kind: Kind,
    /// `{n}` (the producer's counter) and `{uuid}` (a UUID made from it)
    /// are replaced; `None`: idempotent producers.
    pub transactional_id: Option<String>,
    /// The epoch each producer starts at.
    pub epoch: i32,
    /// Steady producers: thousandths of an epoch used per hour from the
    /// load on (the file's `epochs_per_hour` × 1000).
    pub milli_epochs_per_hour: u64,
    /// The coordinator of its transactional ids (else Kafka's rule).
    pub coordinator: Option<i32>,
    /// The transactions' timeout.
    pub timeout_ms: i32,
    /// Its first producer id (its block is [`BLOCK`] ids).
    pub first_id: i64,
    /// When the file was loaded (steady epochs count from then).
    pub loaded_ms: i64,
    /// Index of this generator, for its UUIDs.
    pub(super) index: usize,
    /// Churn: the first producer whose transaction is not yet at its
    /// coordinator.
    pub(super) next_txn: i64,
}

impl Generator {
    pub(super) fn owns(&self, producer_id: i64) -> bool {
        (self.first_id..self.first_id.saturating_add(BLOCK)).contains(&producer_id)
    }

    /// The transactional id of producer `k`.
    pub fn transactional_id_of(&self, k: i64) -> Option<String> {
        let t = self.transactional_id.as_ref()?;
        Some(
            t.replace("{n}", &k.to_string())
                .replace("{uuid}", &uuid(self.index, k)),
        )
    }

    /// A steady producer's epoch at `now_ms`.
    pub(super) fn epoch_at(&self, now_ms: i64) -> i32 {
        let elapsed = u128::try_from((now_ms - self.loaded_ms).max(0)).unwrap_or(0);
        let used = elapsed * u128::from(self.milli_epochs_per_hour) / 3_600_000_000;
        let epoch = u128::try_from(self.epoch).unwrap_or(0) + used;
        i32::try_from(epoch.min(i16::MAX as u128)).unwrap_or(i32::from(i16::MAX))
    }

    /// Churn: the producers made by `now_ms` (`None`: none yet).
    pub(super) fn made(&self, now_ms: i64) -> Option<i64> {
        match self.kind {
            Kind::Churn { every_ms, start_ms } if now_ms >= start_ms => {
                Some(((now_ms - start_ms) / every_ms).min(BLOCK - 1))
            }
            _ => None,
        }
    }
}

/// A UUID-shaped id (version 4 layout) made from a generator and a counter.
fn uuid(index: usize, k: i64) -> String {
    let mix = |seed: u64| {
        let mut h = seed ^ 0xcbf2_9ce4_8422_2325;
        for b in (index as u64).to_le_bytes().iter().chain(&k.to_le_bytes()) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    };
    let (a, b) = (mix(1), mix(2));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}
