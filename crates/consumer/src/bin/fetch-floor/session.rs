//! The fetch session of one broker connection (KIP-227), kept as small as it can be: a full
//! request that asks the broker for a session, then incremental requests that list only the
//! partitions whose fetch offset moved (the broker keeps the others' offsets). An error about the
//! session starts a new one. Before Fetch v7 there are no sessions: every request is full.

use mooring_wire::error_code::ErrorCode;

/// The first Fetch version with sessions.
const SESSIONS_VERSION: i16 = 7;

/// What the next request says about its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Session {
    sessions: bool,
    id: i32,
    epoch: i32,
}

impl Session {
    /// A session for Fetch `version` that has not been asked for yet.
    pub fn new(version: i16) -> Session {
        let sessions = version >= SESSIONS_VERSION;
        Session {
            sessions,
            id: 0,
            epoch: if sessions { 0 } else { -1 },
        }
    }

    /// Whether the next request must list every partition.
    pub fn is_full(&self) -> bool {
        self.id == 0
    }

    /// The next request's `session_id` and `session_epoch`.
    pub fn fields(&self) -> (i32, i32) {
        (self.id, self.epoch)
    }

    /// Takes the broker's answer (its top-level error and session id); an error that is not
    /// about the session is returned.
    pub fn answered(&mut self, code: ErrorCode, id: i32) -> Result<(), ErrorCode> {
        match code {
            ErrorCode::None if self.sessions && id != 0 => {
                if self.id != id {
                    self.id = id;
                    self.epoch = 0;
                }
                self.epoch = if self.epoch == i32::MAX {
                    1
                } else {
                    self.epoch + 1
                };
                Ok(())
            }
            ErrorCode::None => {
                self.id = 0;
                Ok(())
            }
            ErrorCode::FetchSessionIdNotFound | ErrorCode::InvalidFetchSessionEpoch => {
                *self = Session::new(if self.sessions { SESSIONS_VERSION } else { 0 });
                Ok(())
            }
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_then_incremental_then_full_again_after_a_session_error() {
        let mut s = Session::new(12);
        assert!(s.is_full());
        assert_eq!(s.fields(), (0, 0));
        s.answered(ErrorCode::None, 42).expect("session");
        assert!(!s.is_full());
        assert_eq!(s.fields(), (42, 1));
        s.answered(ErrorCode::None, 42).expect("session");
        assert_eq!(s.fields(), (42, 2));
        s.answered(ErrorCode::InvalidFetchSessionEpoch, 0)
            .expect("a session error starts over");
        assert_eq!(s.fields(), (0, 0));
        assert_eq!(
            s.answered(ErrorCode::UnknownServerError, 0),
            Err(ErrorCode::UnknownServerError)
        );
    }

    #[test]
    fn no_sessions_before_v7_and_none_when_the_broker_gives_none() {
        let mut old = Session::new(6);
        assert_eq!(old.fields(), (0, -1));
        old.answered(ErrorCode::None, 0).expect("answer");
        assert_eq!(old.fields(), (0, -1));
        let mut refused = Session::new(12);
        refused.answered(ErrorCode::None, 0).expect("answer");
        assert!(refused.is_full());
        assert_eq!(refused.fields(), (0, 0));
    }
}
