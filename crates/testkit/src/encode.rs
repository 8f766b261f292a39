//! Request builders checked against the strict encoder at every version a broker may negotiate.

use bytes::BytesMut;
use mooring_wire::frame::encode_request;
use mooring_wire::messages::Request;

/// Encodes `build(v)` as a whole frame at every version of `R`; one line per version that fails,
/// naming the request, the version and `case`.
pub fn encode_failures<R: Request>(case: &str, build: impl Fn(i16) -> R) -> Vec<String> {
    (R::MIN_VERSION..=R::MAX_VERSION)
        .filter_map(|version| {
            let mut buf = BytesMut::new();
            encode_request(&mut buf, &build(version), version, 7, Some("mooring-test"))
                .err()
                .map(|e| format!("{} v{version} ({case}): {e}", R::NAME))
        })
        .collect()
}
