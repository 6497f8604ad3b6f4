//! The sink of a describe, with the counts kept on the way.

use kdp_domain::partition::DescribeSummary;

use crate::describe::options::{FramedEvent, FramedOutcome};

/// Passes events on and counts them.
pub(crate) struct Report<F> {
    pub(crate) sink: F,
    pub(crate) summary: DescribeSummary,
}

impl<F: FnMut(FramedEvent)> Report<F> {
    pub(crate) fn planned(&mut self, partitions: usize) {
        (self.sink)(FramedEvent::Planned { partitions });
    }

    pub(crate) fn results(
        &mut self,
        broker_id: Option<i32>,
        throttle_time_ms: i32,
        mut outcomes: Vec<FramedOutcome>,
    ) {
        if outcomes.is_empty() {
            return;
        }
        outcomes.sort_by(|a, b| a.partition.cmp(&b.partition));
        let s = &mut self.summary;
        s.partitions += outcomes.len();
        s.failed += outcomes.iter().filter(|o| o.result.is_err()).count();
        s.max_throttle_time_ms = s.max_throttle_time_ms.max(throttle_time_ms);
        (self.sink)(FramedEvent::Results {
            broker_id,
            throttle_time_ms,
            outcomes,
        });
    }
}
