//! The API versions a broker supports (its ApiVersions answer) and the version negotiated with it
//! for each request: the highest both sides implement (KIP-35, KIP-511).

use std::collections::HashMap;

use mooring_wire::messages::Request;

use crate::error::{Error, Result};

/// api key → (broker's min version, broker's max version).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionTable {
    ranges: HashMap<i16, (i16, i16)>,
}

impl VersionTable {
    /// A table from (api key, min, max) triples.
    pub fn new(ranges: impl IntoIterator<Item = (i16, i16, i16)>) -> VersionTable {
        VersionTable {
            ranges: ranges
                .into_iter()
                .map(|(key, min, max)| (key, (min, max)))
                .collect(),
        }
    }

    /// The broker's range for an API key, if it supports it at all.
    pub fn broker_range(&self, api_key: i16) -> Option<(i16, i16)> {
        self.ranges.get(&api_key).copied()
    }

    /// The highest version of `R` that both the broker and this client implement.
    pub fn version<R: Request>(&self, broker: &str) -> Result<i16> {
        self.common(R::API_KEY, R::MIN_VERSION, R::MAX_VERSION)
            .ok_or_else(|| Error::UnsupportedVersion {
                api: R::NAME,
                broker: broker.to_string(),
            })
    }

    /// The highest version in both `ours_min..=ours_max` and the broker's range.
    pub fn common(&self, api_key: i16, ours_min: i16, ours_max: i16) -> Option<i16> {
        let (min, max) = self.broker_range(api_key)?;
        let version = max.min(ours_max);
        (version >= min.max(ours_min)).then_some(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mooring_wire::messages::{FindCoordinatorRequest, JoinGroupRequest, MetadataRequest};

    #[test]
    fn highest_common_version() {
        let table = VersionTable::new([(3, 0, 20), (10, 0, 4), (11, 10, 12)]);
        assert_eq!(table.version::<MetadataRequest>("b").ok(), Some(13));
        assert_eq!(table.version::<FindCoordinatorRequest>("b").ok(), Some(4));
        // The broker's range starts above ours: nothing in common.
        assert!(matches!(
            table.version::<JoinGroupRequest>("b"),
            Err(Error::UnsupportedVersion {
                api: "JoinGroupRequest",
                ..
            })
        ));
        assert_eq!(table.common(99, 0, 3), None);
    }
}
