//! The slow work the member's loop owes. Commands and heartbeat answers are handled by
//! synchronous code (so the member's `select!` stays cancellation-safe); what they decide that
//! needs a listener call or the network, they hand to the loop as a [`Chore`], and the loop does
//! it before its next turn, in the order of [`Chore`]'s variants: a lost membership first, since
//! nothing else is safe before the listener's `lost`.

use crate::events::RebalanceCause;

/// One piece of slow work, in the order the loop takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chore {
    /// The membership is gone: give every partition up through `lost`, then rejoin for this
    /// cause (`None`: stay out).
    Lose { rejoin: Option<RebalanceCause> },
    /// The processing loop missed `max.poll.interval.ms`: leave, lose, rejoin.
    GoStale,
    /// An empty subscription: leave the group and stay out.
    Unsubscribe,
}

/// The chores owed, at most one of each kind (a later `Lose` replaces an earlier one's cause).
#[derive(Debug, Default)]
pub(super) struct Chores {
    lose: Option<Option<RebalanceCause>>,
    stale: bool,
    unsubscribe: bool,
}

impl Chores {
    pub(super) fn owe(&mut self, chore: Chore) {
        match chore {
            Chore::Lose { rejoin } => self.lose = Some(rejoin),
            Chore::GoStale => self.stale = true,
            Chore::Unsubscribe => self.unsubscribe = true,
        }
    }

    /// No longer owed: going stale once the membership has ended, leaving once subscribed again.
    pub(super) fn cancel(&mut self, chore: Chore) {
        match chore {
            Chore::Lose { .. } => self.lose = None,
            Chore::GoStale => self.stale = false,
            Chore::Unsubscribe => self.unsubscribe = false,
        }
    }

    /// The first chore owed, no longer owed once taken.
    pub(super) fn take(&mut self) -> Option<Chore> {
        if let Some(rejoin) = self.lose.take() {
            return Some(Chore::Lose { rejoin });
        }
        if std::mem::take(&mut self.stale) {
            return Some(Chore::GoStale);
        }
        std::mem::take(&mut self.unsubscribe).then_some(Chore::Unsubscribe)
    }

    /// Whether a chore is owed (a reconciliation under way stops for it).
    pub(super) fn any(&self) -> bool {
        self.lose.is_some() || self.stale || self.unsubscribe
    }

    /// Whether heartbeats wait for a chore: the partitions must be lost, or the member must leave
    /// as stale, before the coordinator hears from it again.
    pub(super) fn hold_heartbeats(&self) -> bool {
        self.lose.is_some() || self.stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taken_in_order_each_once() {
        let mut chores = Chores::default();
        chores.owe(Chore::Unsubscribe);
        chores.owe(Chore::GoStale);
        chores.owe(Chore::Lose {
            rejoin: Some(RebalanceCause::EpochFenced),
        });
        chores.owe(Chore::Lose { rejoin: None });
        assert!(chores.hold_heartbeats());
        assert_eq!(chores.take(), Some(Chore::Lose { rejoin: None }));
        assert_eq!(chores.take(), Some(Chore::GoStale));
        assert!(!chores.hold_heartbeats());
        assert!(chores.any());
        assert_eq!(chores.take(), Some(Chore::Unsubscribe));
        assert_eq!(chores.take(), None);
        assert!(!chores.any());
    }

    #[test]
    fn cancelled_chores_are_not_taken() {
        let mut chores = Chores::default();
        chores.owe(Chore::GoStale);
        chores.owe(Chore::Unsubscribe);
        chores.cancel(Chore::GoStale);
        chores.cancel(Chore::Unsubscribe);
        assert_eq!(chores.take(), None);
    }
}
