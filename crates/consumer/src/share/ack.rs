//! Acknowledgements as the wire carries them: each record's verdict ([`Acknowledge`]; a handler's,
//! on its way to the fetcher, is a [`Verdict`]), and the verdicts of one share-partition laid out as `AcknowledgementBatch`es (first offset, last
//! offset, types), as ShareFetch and ShareAcknowledge both take them. Consecutive offsets go in one
//! batch; a batch whose offsets share one type says it once, else it says one type per offset, as
//! Java's `AcknowledgementBatch` does.

use std::collections::BTreeMap;
use std::sync::Arc;

/// A record's verdict, for the fetcher (the topic name shared with the record: no allocation per
/// record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub topic: Arc<str>,
    pub partition: i32,
    pub offset: i64,
    /// Which delivery of the record it is for.
    pub delivery_count: i16,
    pub ack: Acknowledge,
}

/// What becomes of one acquired record (KIP-932's `AcknowledgeType`, KIP-1222's `Renew`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Acknowledge {
    /// An acquired offset that holds no record for the application (a transaction marker, a
    /// record compacted away): given back as done.
    Gap,
    /// Processed: never delivered again.
    Accept,
    /// Not processed: available again, to any member, until the group's delivery limit
    /// (`share.delivery.count.limit`) archives it.
    Release,
    /// Poison: never delivered again (archived, or sent to the group's dead-letter topic).
    Reject,
    /// Still being processed: the acquisition lock is extended, the record stays this member's.
    Renew,
}

impl Acknowledge {
    /// The wire value of `AcknowledgeTypes`.
    pub fn wire(self) -> i8 {
        match self {
            Acknowledge::Gap => 0,
            Acknowledge::Accept => 1,
            Acknowledge::Release => 2,
            Acknowledge::Reject => 3,
            Acknowledge::Renew => 4,
        }
    }

    /// Whether the record leaves this member with it (every type but `Renew`).
    pub fn is_final(self) -> bool {
        self != Acknowledge::Renew
    }
}

/// One `AcknowledgementBatch`: offsets `first..=last`, and either one type for all of them or
/// one per offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AckBatch {
    pub first: i64,
    pub last: i64,
    pub types: Vec<i8>,
}

/// The verdicts of one share-partition waiting to be sent, by offset, each with the delivery of
/// the record it is for (0 where that does not matter: gaps, renewals). A later verdict for an
/// offset replaces an earlier one (a renewal overtaken by the handler's end).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct PartitionAcks {
    by_offset: BTreeMap<i64, (Acknowledge, i16)>,
    /// How many of them are final (not renewals).
    finals: usize,
}

impl PartitionAcks {
    /// `offset`'s verdict. A renewal never replaces a final verdict: the record is gone.
    pub(crate) fn add(&mut self, offset: i64, ack: Acknowledge) {
        self.add_for(offset, ack, 0);
    }

    /// `offset`'s verdict for its `delivery_count`-th delivery (what a release is counted by).
    pub(crate) fn add_for(&mut self, offset: i64, ack: Acknowledge, delivery_count: i16) {
        match self.by_offset.get(&offset) {
            Some((earlier, _)) if earlier.is_final() && !ack.is_final() => {}
            earlier => {
                let was_final = earlier.is_some_and(|(a, _)| a.is_final());
                if ack.is_final() && !was_final {
                    self.finals += 1;
                }
                self.by_offset.insert(offset, (ack, delivery_count));
            }
        }
    }

    /// The same verdict for `first..=last` (a gap the broker's acquired range left, or what an
    /// unreadable batch held), for their `delivery_count`-th delivery.
    pub(crate) fn add_range(
        &mut self,
        first: i64,
        last: i64,
        ack: Acknowledge,
        delivery_count: i16,
    ) {
        for offset in first..=last {
            self.add_for(offset, ack, delivery_count);
        }
    }

    /// Takes the final verdicts out, leaving the renewals (all of it at once when there are none).
    pub(crate) fn take_finals(&mut self) -> PartitionAcks {
        if self.finals == self.by_offset.len() {
            return std::mem::take(self);
        }
        let mut taken = PartitionAcks::default();
        self.by_offset
            .retain(|&offset, &mut (ack, delivery_count)| {
                let fin = ack.is_final();
                if fin {
                    taken.by_offset.insert(offset, (ack, delivery_count));
                }
                !fin
            });
        taken.finals = taken.by_offset.len();
        self.finals = 0;
        taken
    }

    /// The delivery counts of the records released.
    pub(crate) fn released(&self) -> impl Iterator<Item = i16> + '_ {
        self.by_offset
            .values()
            .filter(|(a, _)| *a == Acknowledge::Release)
            .map(|(_, d)| *d)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_offset.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.by_offset.len()
    }

    /// How many are final verdicts (not renewals).
    pub(crate) fn finals(&self) -> usize {
        self.finals
    }

    /// Whether a renewal is among them (the request must say `IsRenewAck`).
    pub(crate) fn renews(&self) -> bool {
        // Every verdict that is not final is a renewal.
        self.finals < self.by_offset.len()
    }

    /// The verdicts, offset by offset, with the delivery each is for.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (i64, Acknowledge, i16)> + '_ {
        self.by_offset.iter().map(|(o, (a, d))| (*o, *a, *d))
    }

    /// The verdicts as batches of consecutive offsets.
    pub(crate) fn batches(&self) -> Vec<AckBatch> {
        let mut out: Vec<AckBatch> = Vec::new();
        let mut types: Vec<i8> = Vec::new();
        for (&offset, (ack, _)) in &self.by_offset {
            match out.last_mut() {
                Some(batch) if batch.last + 1 == offset => {
                    batch.last = offset;
                    types.push(ack.wire());
                }
                _ => {
                    if let Some(batch) = out.last_mut() {
                        batch.types = collapse(std::mem::take(&mut types));
                    }
                    out.push(AckBatch {
                        first: offset,
                        last: offset,
                        types: Vec::new(),
                    });
                    types.push(ack.wire());
                }
            }
        }
        if let Some(batch) = out.last_mut() {
            batch.types = collapse(types);
        }
        out
    }
}

/// One type when every offset has the same, else the list as it is.
fn collapse(types: Vec<i8>) -> Vec<i8> {
    match types.first() {
        Some(&first) if types.iter().all(|t| *t == first) => vec![first],
        _ => types,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_offsets_share_a_batch_and_one_type_is_said_once() {
        let mut acks = PartitionAcks::default();
        for offset in [5, 6, 7] {
            acks.add(offset, Acknowledge::Accept);
        }
        acks.add_for(9, Acknowledge::Release, 3);
        acks.add(10, Acknowledge::Reject);
        acks.add_range(11, 12, Acknowledge::Gap, 0);
        assert_eq!(
            acks.batches(),
            vec![
                AckBatch {
                    first: 5,
                    last: 7,
                    types: vec![1]
                },
                AckBatch {
                    first: 9,
                    last: 12,
                    types: vec![2, 3, 0, 0]
                },
            ]
        );
        assert_eq!(acks.len(), 7);
        assert_eq!(acks.finals(), 7);
        assert_eq!(acks.released().collect::<Vec<_>>(), [3]);
        assert!(!acks.renews());
    }

    #[test]
    fn a_renewal_never_replaces_a_final_verdict_but_a_final_verdict_replaces_a_renewal() {
        let mut acks = PartitionAcks::default();
        acks.add(1, Acknowledge::Renew);
        assert!(acks.renews());
        assert_eq!(acks.finals(), 0);
        acks.add(1, Acknowledge::Accept);
        acks.add(1, Acknowledge::Renew);
        assert_eq!(acks.finals(), 1);
        assert_eq!(
            acks.iter().collect::<Vec<_>>(),
            [(1, Acknowledge::Accept, 0)]
        );
        assert!(!acks.renews());
        assert_eq!(acks.batches()[0].types, vec![1]);
    }

    #[test]
    fn taking_the_final_verdicts_leaves_the_renewals_and_both_counts_right() {
        let mut acks = PartitionAcks::default();
        acks.add_for(1, Acknowledge::Accept, 1);
        acks.add(2, Acknowledge::Renew);
        acks.add_for(3, Acknowledge::Release, 2);
        let taken = acks.take_finals();
        assert_eq!(
            taken.iter().collect::<Vec<_>>(),
            [(1, Acknowledge::Accept, 1), (3, Acknowledge::Release, 2)]
        );
        assert_eq!(taken.finals(), 2);
        assert_eq!(
            acks.iter().collect::<Vec<_>>(),
            [(2, Acknowledge::Renew, 0)]
        );
        assert_eq!(acks.finals(), 0);

        acks.add(2, Acknowledge::Accept);
        let all = acks.take_finals();
        assert_eq!(
            all.iter().collect::<Vec<_>>(),
            [(2, Acknowledge::Accept, 0)]
        );
        assert!(acks.is_empty());
        assert_eq!(acks.finals(), 0);
    }
}
