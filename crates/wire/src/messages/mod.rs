//! Kafka request and response bodies, generated from Kafka 4.4.0's message schemas by
//! `mooring-wire-codegen` (do not edit by hand: see that crate's documentation to regenerate).
//!
//! One module per API, each holding the request, the response and their nested structs, with
//! every version of the schema's `validVersions`. Every message implements [`Message`]
//! (`encode`/`decode` at an explicit version) and [`Request`] or [`Response`].
//! See <https://kafka.apache.org/protocol#protocol_messages> and KIP-482 for flexible versions.

use bytes::{BufMut, Bytes, BytesMut};

use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

pub mod api_versions;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod create_topics;
pub mod delete_topics;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_share_group_offsets;
pub mod fetch;
pub mod find_coordinator;
pub mod get_telemetry_subscriptions;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod join_group;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_fetch;
pub mod produce;
pub mod push_telemetry;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod share_acknowledge;
pub mod share_fetch;
pub mod share_group_describe;
pub mod share_group_heartbeat;
pub mod sync_group;

pub use api_versions::{ApiVersionsRequest, ApiVersionsResponse};
pub use consumer_group_describe::{ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse};
pub use consumer_group_heartbeat::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
pub use create_topics::{CreateTopicsRequest, CreateTopicsResponse};
pub use delete_topics::{DeleteTopicsRequest, DeleteTopicsResponse};
pub use describe_configs::{DescribeConfigsRequest, DescribeConfigsResponse};
pub use describe_groups::{DescribeGroupsRequest, DescribeGroupsResponse};
pub use describe_share_group_offsets::{
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse,
};
pub use fetch::{FetchRequest, FetchResponse};
pub use find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
pub use get_telemetry_subscriptions::{
    GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse,
};
pub use heartbeat::{HeartbeatRequest, HeartbeatResponse};
pub use incremental_alter_configs::{
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse,
};
pub use join_group::{JoinGroupRequest, JoinGroupResponse};
pub use leave_group::{LeaveGroupRequest, LeaveGroupResponse};
pub use list_groups::{ListGroupsRequest, ListGroupsResponse};
pub use list_offsets::{ListOffsetsRequest, ListOffsetsResponse};
pub use metadata::{MetadataRequest, MetadataResponse};
pub use offset_commit::{OffsetCommitRequest, OffsetCommitResponse};
pub use offset_fetch::{OffsetFetchRequest, OffsetFetchResponse};
pub use produce::{ProduceRequest, ProduceResponse};
pub use push_telemetry::{PushTelemetryRequest, PushTelemetryResponse};
pub use sasl_authenticate::{SaslAuthenticateRequest, SaslAuthenticateResponse};
pub use sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
pub use share_acknowledge::{ShareAcknowledgeRequest, ShareAcknowledgeResponse};
pub use share_fetch::{ShareFetchRequest, ShareFetchResponse};
pub use share_group_describe::{ShareGroupDescribeRequest, ShareGroupDescribeResponse};
pub use share_group_heartbeat::{ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};
pub use sync_group::{SyncGroupRequest, SyncGroupResponse};

/// The APIs this crate implements, with their Kafka API keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiKey {
    /// `Produce` (key 0), requests v3-13.
    Produce = 0,
    /// `Fetch` (key 1), requests v4-18.
    Fetch = 1,
    /// `ListOffsets` (key 2), requests v1-11.
    ListOffsets = 2,
    /// `Metadata` (key 3), requests v0-13.
    Metadata = 3,
    /// `OffsetCommit` (key 8), requests v2-10.
    OffsetCommit = 8,
    /// `OffsetFetch` (key 9), requests v1-10.
    OffsetFetch = 9,
    /// `FindCoordinator` (key 10), requests v0-6.
    FindCoordinator = 10,
    /// `JoinGroup` (key 11), requests v0-9.
    JoinGroup = 11,
    /// `Heartbeat` (key 12), requests v0-4.
    Heartbeat = 12,
    /// `LeaveGroup` (key 13), requests v0-5.
    LeaveGroup = 13,
    /// `SyncGroup` (key 14), requests v0-5.
    SyncGroup = 14,
    /// `DescribeGroups` (key 15), requests v0-6.
    DescribeGroups = 15,
    /// `ListGroups` (key 16), requests v0-5.
    ListGroups = 16,
    /// `SaslHandshake` (key 17), requests v0-1.
    SaslHandshake = 17,
    /// `ApiVersions` (key 18), requests v0-5.
    ApiVersions = 18,
    /// `CreateTopics` (key 19), requests v2-7.
    CreateTopics = 19,
    /// `DeleteTopics` (key 20), requests v1-6.
    DeleteTopics = 20,
    /// `DescribeConfigs` (key 32), requests v1-4.
    DescribeConfigs = 32,
    /// `SaslAuthenticate` (key 36), requests v0-2.
    SaslAuthenticate = 36,
    /// `IncrementalAlterConfigs` (key 44), requests v0-1.
    IncrementalAlterConfigs = 44,
    /// `ConsumerGroupHeartbeat` (key 68), requests v0-1.
    ConsumerGroupHeartbeat = 68,
    /// `ConsumerGroupDescribe` (key 69), requests v0-1.
    ConsumerGroupDescribe = 69,
    /// `GetTelemetrySubscriptions` (key 71), requests v0.
    GetTelemetrySubscriptions = 71,
    /// `PushTelemetry` (key 72), requests v0.
    PushTelemetry = 72,
    /// `ShareGroupHeartbeat` (key 76), requests v1.
    ShareGroupHeartbeat = 76,
    /// `ShareGroupDescribe` (key 77), requests v1.
    ShareGroupDescribe = 77,
    /// `ShareFetch` (key 78), requests v1-2.
    ShareFetch = 78,
    /// `ShareAcknowledge` (key 79), requests v1-2.
    ShareAcknowledge = 79,
    /// `DescribeShareGroupOffsets` (key 90), requests v0-1.
    DescribeShareGroupOffsets = 90,
}

impl ApiKey {
    /// Every API this crate implements, by key.
    pub const ALL: [ApiKey; 29] = [
        ApiKey::Produce,
        ApiKey::Fetch,
        ApiKey::ListOffsets,
        ApiKey::Metadata,
        ApiKey::OffsetCommit,
        ApiKey::OffsetFetch,
        ApiKey::FindCoordinator,
        ApiKey::JoinGroup,
        ApiKey::Heartbeat,
        ApiKey::LeaveGroup,
        ApiKey::SyncGroup,
        ApiKey::DescribeGroups,
        ApiKey::ListGroups,
        ApiKey::SaslHandshake,
        ApiKey::ApiVersions,
        ApiKey::CreateTopics,
        ApiKey::DeleteTopics,
        ApiKey::DescribeConfigs,
        ApiKey::SaslAuthenticate,
        ApiKey::IncrementalAlterConfigs,
        ApiKey::ConsumerGroupHeartbeat,
        ApiKey::ConsumerGroupDescribe,
        ApiKey::GetTelemetrySubscriptions,
        ApiKey::PushTelemetry,
        ApiKey::ShareGroupHeartbeat,
        ApiKey::ShareGroupDescribe,
        ApiKey::ShareFetch,
        ApiKey::ShareAcknowledge,
        ApiKey::DescribeShareGroupOffsets,
    ];

    /// The API for a key, if this crate implements it.
    pub fn from_i16(key: i16) -> Option<ApiKey> {
        match key {
            0 => Some(ApiKey::Produce),
            1 => Some(ApiKey::Fetch),
            2 => Some(ApiKey::ListOffsets),
            3 => Some(ApiKey::Metadata),
            8 => Some(ApiKey::OffsetCommit),
            9 => Some(ApiKey::OffsetFetch),
            10 => Some(ApiKey::FindCoordinator),
            11 => Some(ApiKey::JoinGroup),
            12 => Some(ApiKey::Heartbeat),
            13 => Some(ApiKey::LeaveGroup),
            14 => Some(ApiKey::SyncGroup),
            15 => Some(ApiKey::DescribeGroups),
            16 => Some(ApiKey::ListGroups),
            17 => Some(ApiKey::SaslHandshake),
            18 => Some(ApiKey::ApiVersions),
            19 => Some(ApiKey::CreateTopics),
            20 => Some(ApiKey::DeleteTopics),
            32 => Some(ApiKey::DescribeConfigs),
            36 => Some(ApiKey::SaslAuthenticate),
            44 => Some(ApiKey::IncrementalAlterConfigs),
            68 => Some(ApiKey::ConsumerGroupHeartbeat),
            69 => Some(ApiKey::ConsumerGroupDescribe),
            71 => Some(ApiKey::GetTelemetrySubscriptions),
            72 => Some(ApiKey::PushTelemetry),
            76 => Some(ApiKey::ShareGroupHeartbeat),
            77 => Some(ApiKey::ShareGroupDescribe),
            78 => Some(ApiKey::ShareFetch),
            79 => Some(ApiKey::ShareAcknowledge),
            90 => Some(ApiKey::DescribeShareGroupOffsets),
            _ => None,
        }
    }

    /// The wire value.
    pub fn code(self) -> i16 {
        self as i16
    }

    /// Kafka's name for the API, e.g. `JoinGroup`.
    pub fn name(self) -> &'static str {
        match self {
            ApiKey::Produce => "Produce",
            ApiKey::Fetch => "Fetch",
            ApiKey::ListOffsets => "ListOffsets",
            ApiKey::Metadata => "Metadata",
            ApiKey::OffsetCommit => "OffsetCommit",
            ApiKey::OffsetFetch => "OffsetFetch",
            ApiKey::FindCoordinator => "FindCoordinator",
            ApiKey::JoinGroup => "JoinGroup",
            ApiKey::Heartbeat => "Heartbeat",
            ApiKey::LeaveGroup => "LeaveGroup",
            ApiKey::SyncGroup => "SyncGroup",
            ApiKey::DescribeGroups => "DescribeGroups",
            ApiKey::ListGroups => "ListGroups",
            ApiKey::SaslHandshake => "SaslHandshake",
            ApiKey::ApiVersions => "ApiVersions",
            ApiKey::CreateTopics => "CreateTopics",
            ApiKey::DeleteTopics => "DeleteTopics",
            ApiKey::DescribeConfigs => "DescribeConfigs",
            ApiKey::SaslAuthenticate => "SaslAuthenticate",
            ApiKey::IncrementalAlterConfigs => "IncrementalAlterConfigs",
            ApiKey::ConsumerGroupHeartbeat => "ConsumerGroupHeartbeat",
            ApiKey::ConsumerGroupDescribe => "ConsumerGroupDescribe",
            ApiKey::GetTelemetrySubscriptions => "GetTelemetrySubscriptions",
            ApiKey::PushTelemetry => "PushTelemetry",
            ApiKey::ShareGroupHeartbeat => "ShareGroupHeartbeat",
            ApiKey::ShareGroupDescribe => "ShareGroupDescribe",
            ApiKey::ShareFetch => "ShareFetch",
            ApiKey::ShareAcknowledge => "ShareAcknowledge",
            ApiKey::DescribeShareGroupOffsets => "DescribeShareGroupOffsets",
        }
    }

    /// The lowest request version this crate implements.
    pub fn min_version(self) -> i16 {
        match self {
            ApiKey::Produce => 3,
            ApiKey::Fetch => 4,
            ApiKey::ListOffsets => 1,
            ApiKey::Metadata => 0,
            ApiKey::OffsetCommit => 2,
            ApiKey::OffsetFetch => 1,
            ApiKey::FindCoordinator => 0,
            ApiKey::JoinGroup => 0,
            ApiKey::Heartbeat => 0,
            ApiKey::LeaveGroup => 0,
            ApiKey::SyncGroup => 0,
            ApiKey::DescribeGroups => 0,
            ApiKey::ListGroups => 0,
            ApiKey::SaslHandshake => 0,
            ApiKey::ApiVersions => 0,
            ApiKey::CreateTopics => 2,
            ApiKey::DeleteTopics => 1,
            ApiKey::DescribeConfigs => 1,
            ApiKey::SaslAuthenticate => 0,
            ApiKey::IncrementalAlterConfigs => 0,
            ApiKey::ConsumerGroupHeartbeat => 0,
            ApiKey::ConsumerGroupDescribe => 0,
            ApiKey::GetTelemetrySubscriptions => 0,
            ApiKey::PushTelemetry => 0,
            ApiKey::ShareGroupHeartbeat => 1,
            ApiKey::ShareGroupDescribe => 1,
            ApiKey::ShareFetch => 1,
            ApiKey::ShareAcknowledge => 1,
            ApiKey::DescribeShareGroupOffsets => 0,
        }
    }

    /// The highest request version this crate implements.
    pub fn max_version(self) -> i16 {
        match self {
            ApiKey::Produce => 13,
            ApiKey::Fetch => 18,
            ApiKey::ListOffsets => 11,
            ApiKey::Metadata => 13,
            ApiKey::OffsetCommit => 10,
            ApiKey::OffsetFetch => 10,
            ApiKey::FindCoordinator => 6,
            ApiKey::JoinGroup => 9,
            ApiKey::Heartbeat => 4,
            ApiKey::LeaveGroup => 5,
            ApiKey::SyncGroup => 5,
            ApiKey::DescribeGroups => 6,
            ApiKey::ListGroups => 5,
            ApiKey::SaslHandshake => 1,
            ApiKey::ApiVersions => 5,
            ApiKey::CreateTopics => 7,
            ApiKey::DeleteTopics => 6,
            ApiKey::DescribeConfigs => 4,
            ApiKey::SaslAuthenticate => 2,
            ApiKey::IncrementalAlterConfigs => 1,
            ApiKey::ConsumerGroupHeartbeat => 1,
            ApiKey::ConsumerGroupDescribe => 1,
            ApiKey::GetTelemetrySubscriptions => 0,
            ApiKey::PushTelemetry => 0,
            ApiKey::ShareGroupHeartbeat => 1,
            ApiKey::ShareGroupDescribe => 1,
            ApiKey::ShareFetch => 2,
            ApiKey::ShareAcknowledge => 2,
            ApiKey::DescribeShareGroupOffsets => 1,
        }
    }

    /// The first flexible request version (KIP-482), if any.
    pub fn flexible_min_version(self) -> Option<i16> {
        match self {
            ApiKey::Produce => Some(9),
            ApiKey::Fetch => Some(12),
            ApiKey::ListOffsets => Some(6),
            ApiKey::Metadata => Some(9),
            ApiKey::OffsetCommit => Some(8),
            ApiKey::OffsetFetch => Some(6),
            ApiKey::FindCoordinator => Some(3),
            ApiKey::JoinGroup => Some(6),
            ApiKey::Heartbeat => Some(4),
            ApiKey::LeaveGroup => Some(4),
            ApiKey::SyncGroup => Some(4),
            ApiKey::DescribeGroups => Some(5),
            ApiKey::ListGroups => Some(3),
            ApiKey::SaslHandshake => None,
            ApiKey::ApiVersions => Some(3),
            ApiKey::CreateTopics => Some(5),
            ApiKey::DeleteTopics => Some(4),
            ApiKey::DescribeConfigs => Some(4),
            ApiKey::SaslAuthenticate => Some(2),
            ApiKey::IncrementalAlterConfigs => Some(1),
            ApiKey::ConsumerGroupHeartbeat => Some(0),
            ApiKey::ConsumerGroupDescribe => Some(0),
            ApiKey::GetTelemetrySubscriptions => Some(0),
            ApiKey::PushTelemetry => Some(0),
            ApiKey::ShareGroupHeartbeat => Some(1),
            ApiKey::ShareGroupDescribe => Some(1),
            ApiKey::ShareFetch => Some(1),
            ApiKey::ShareAcknowledge => Some(1),
            ApiKey::DescribeShareGroupOffsets => Some(0),
        }
    }

    /// Whether requests (and responses) of this API are flexible at `version`.
    pub fn is_flexible(self, version: i16) -> bool {
        self.flexible_min_version()
            .is_some_and(|first| version >= first)
    }
}

/// A Kafka request or response body (no header): its identity, its version range, and its codec.
///
/// The version is always explicit: nothing here negotiates. `encode` refuses a value that cannot be
/// expressed at the version (a field the version does not have, holding a non-default value; a null
/// where the version does not allow one) rather than dropping data silently.
pub trait Message: Sized + Default + Clone + PartialEq + std::fmt::Debug {
    /// The schema name, e.g. `"JoinGroupRequest"`.
    const NAME: &'static str;
    /// The API key shared by the request and its response.
    const API_KEY: i16;
    /// The lowest version this crate (and Kafka 4.4) knows.
    const MIN_VERSION: i16;
    /// The highest version this crate (and Kafka 4.4) knows.
    const MAX_VERSION: i16;
    /// The first flexible version (KIP-482: compact lengths and tagged fields), if any.
    const FLEXIBLE_MIN_VERSION: Option<i16>;

    /// Appends the body at `version` to `buf`.
    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError>;

    /// Decodes a whole body at `version`. Byte and record fields share `input`'s memory.
    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError>;

    /// Whether `version` is a flexible version of this message.
    fn is_flexible(version: i16) -> bool {
        Self::FLEXIBLE_MIN_VERSION.is_some_and(|first| version >= first)
    }

    /// Whether `version` is within `MIN_VERSION..=MAX_VERSION`.
    fn supports_version(version: i16) -> bool {
        (Self::MIN_VERSION..=Self::MAX_VERSION).contains(&version)
    }
}

/// A request body; `Response` is the body the broker answers with.
pub trait Request: Message {
    type Response: Response;
}

/// A response body; `Request` is the body it answers.
pub trait Response: Message {
    type Request: Request;
}

/// Where an encoding error happened: which message, at which version, which field.
#[derive(Debug, Clone, Copy)]
struct At {
    api: &'static str,
    version: i16,
    field: &'static str,
}

fn at(api: &'static str, version: i16, field: &'static str) -> At {
    At {
        api,
        version,
        field,
    }
}

impl At {
    fn not_at_version(self) -> EncodeError {
        EncodeError::FieldNotAtVersion {
            api: self.api,
            version: self.version,
            field: self.field,
        }
    }

    fn null_not_allowed(self) -> EncodeError {
        EncodeError::NullNotAllowed {
            api: self.api,
            version: self.version,
            field: self.field,
        }
    }
}

fn check_encode_version<M: Message>(version: i16) -> Result<(), EncodeError> {
    if M::supports_version(version) {
        Ok(())
    } else {
        Err(EncodeError::UnsupportedVersion {
            api: M::NAME,
            version,
        })
    }
}

fn check_decode_version<M: Message>(version: i16) -> Result<(), DecodeError> {
    if M::supports_version(version) {
        Ok(())
    } else {
        Err(DecodeError::UnsupportedVersion {
            api: M::NAME,
            version,
        })
    }
}

/// A whole-body parse: anything left over is an error.
fn finish<T>(parsed: PResult<'_, T>) -> Result<T, DecodeError> {
    let (rest, value) = parsed?;
    if rest.is_empty() {
        Ok(value)
    } else {
        Err(DecodeError::TrailingBytes(rest.len()))
    }
}

/// `sub` as a `Bytes` sharing `root`'s memory when it lies inside it (it always does when `sub` was
/// parsed out of `root`); a copy otherwise, so this can never panic.
fn share(root: &Bytes, sub: &[u8]) -> Bytes {
    let start = root.as_ptr() as usize;
    let sub_start = sub.as_ptr() as usize;
    if sub.is_empty() {
        Bytes::new()
    } else if sub_start >= start && sub_start + sub.len() <= start + root.len() {
        root.slice_ref(sub)
    } else {
        Bytes::copy_from_slice(sub)
    }
}

fn null_refused() -> nom::Err<DecodeError> {
    nom::Err::Error(DecodeError::NegativeLength(-1))
}

fn read_string(input: &[u8], flexible: bool) -> PResult<'_, String> {
    let (rest, s) = primitives::str(flexible)(input)?;
    Ok((rest, s.to_owned()))
}

fn read_nullable_string(
    input: &[u8],
    flexible: bool,
    nullable: bool,
) -> PResult<'_, Option<String>> {
    let (rest, s) = primitives::nullable_str(flexible)(input)?;
    if s.is_none() && !nullable {
        return Err(null_refused());
    }
    Ok((rest, s.map(str::to_owned)))
}

fn read_bytes<'a>(input: &'a [u8], root: &Bytes, flexible: bool) -> PResult<'a, Bytes> {
    let (rest, b) = primitives::bytes(flexible)(input)?;
    Ok((rest, share(root, b)))
}

fn read_nullable_bytes<'a>(
    input: &'a [u8],
    root: &Bytes,
    flexible: bool,
    nullable: bool,
) -> PResult<'a, Option<Bytes>> {
    let (rest, b) = primitives::nullable_bytes(flexible)(input)?;
    if b.is_none() && !nullable {
        return Err(null_refused());
    }
    Ok((rest, b.map(|b| share(root, b))))
}

/// A records field: null reads as `None` where the schema allows it, and as no records where it
/// does not (ShareFetch's records past v0). Null and empty mean the same there, and some brokers
/// write null regardless (franz-go's kfake does): refusing the whole answer would lose what the
/// request carried (a share session's acknowledgements) for nothing.
fn read_nullable_records<'a>(
    input: &'a [u8],
    root: &Bytes,
    flexible: bool,
    nullable: bool,
) -> PResult<'a, Option<Bytes>> {
    let (rest, b) = read_nullable_bytes(input, root, flexible, true)?;
    Ok((
        rest,
        if nullable {
            b
        } else {
            Some(b.unwrap_or_default())
        },
    ))
}

/// An array whose elements take at least `min_size` bytes each on the wire (which bounds what a
/// count read off the wire may pre-allocate).
fn read_array<'a, T>(
    input: &'a [u8],
    flexible: bool,
    min_size: usize,
    elem: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Vec<T>> {
    primitives::array(flexible, min_size, elem)(input)
}

fn read_nullable_array<'a, T>(
    input: &'a [u8],
    flexible: bool,
    nullable: bool,
    min_size: usize,
    elem: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Option<Vec<T>>> {
    let (rest, v) = primitives::nullable_array(flexible, min_size, elem)(input)?;
    if v.is_none() && !nullable {
        return Err(null_refused());
    }
    Ok((rest, v))
}

/// A struct field that may be null, at the versions where it may (`nullable`): an int8 null
/// indicator first, negative for null and anything else for a struct that follows (Java writes -1
/// and 1, and reads any negative byte as null). Elsewhere the struct alone, never null.
fn read_nullable_struct<'a, T>(
    input: &'a [u8],
    nullable: bool,
    parse: impl FnOnce(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Option<T>> {
    let input = if nullable {
        let (rest, indicator) = primitives::int8(input)?;
        if indicator < 0 {
            return Ok((rest, None));
        }
        rest
    } else {
        input
    };
    let (rest, value) = parse(input)?;
    Ok((rest, Some(value)))
}

/// Parses a known tagged field's value, which must fill its declared size exactly.
fn read_tagged<'a, T>(
    value: &'a [u8],
    field: &'static str,
    parse: impl FnOnce(&'a [u8]) -> PResult<'a, T>,
) -> Result<T, nom::Err<DecodeError>> {
    let (rest, v) = parse(value)?;
    if !rest.is_empty() {
        return Err(nom::Err::Error(DecodeError::InvalidValue {
            field,
            detail: format!("{} byte(s) left over in the tagged field", rest.len()),
        }));
    }
    Ok(v)
}

fn write_nullable_string(
    buf: &mut BytesMut,
    s: Option<&str>,
    flexible: bool,
    nullable: bool,
    at: At,
) -> Result<(), EncodeError> {
    if s.is_none() && !nullable {
        return Err(at.null_not_allowed());
    }
    primitives::put_str(buf, s, flexible)
}

fn write_nullable_bytes(
    buf: &mut BytesMut,
    b: Option<&[u8]>,
    flexible: bool,
    nullable: bool,
    at: At,
) -> Result<(), EncodeError> {
    if b.is_none() && !nullable {
        return Err(at.null_not_allowed());
    }
    primitives::put_bytes(buf, b, flexible)
}

fn write_array<T>(
    buf: &mut BytesMut,
    items: &[T],
    flexible: bool,
    mut each: impl FnMut(&mut BytesMut, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    primitives::put_array_len(buf, Some(items.len()), flexible)?;
    for item in items {
        each(buf, item)?;
    }
    Ok(())
}

fn write_nullable_array<T>(
    buf: &mut BytesMut,
    items: Option<&[T]>,
    flexible: bool,
    nullable: bool,
    at: At,
    each: impl FnMut(&mut BytesMut, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match items {
        Some(items) => write_array(buf, items, flexible, each),
        None if nullable => primitives::put_array_len(buf, None, flexible),
        None => Err(at.null_not_allowed()),
    }
}

/// Writes a struct field that may be null (see [`read_nullable_struct`]); a null where the version
/// has no null is an error.
fn write_nullable_struct<T>(
    buf: &mut BytesMut,
    value: Option<&T>,
    nullable: bool,
    at: At,
    write: impl FnOnce(&mut BytesMut, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match value {
        None if nullable => {
            buf.put_i8(-1);
            Ok(())
        }
        None => Err(at.null_not_allowed()),
        Some(value) => {
            if nullable {
                buf.put_i8(1);
            }
            write(buf, value)
        }
    }
}

/// Writes the tagged-field section: the known fields that differ from their defaults and the
/// unknown ones kept from decoding, merged in ascending tag order. Outside flexible versions there
/// is no section, and unknown tagged fields would be lost: that is an error.
fn write_tagged_fields(
    buf: &mut BytesMut,
    flexible: bool,
    known: Vec<(u32, BytesMut)>,
    unknown: &[(u32, Bytes)],
    at: At,
) -> Result<(), EncodeError> {
    if !flexible {
        return if known.is_empty() && unknown.is_empty() {
            Ok(())
        } else {
            Err(at.not_at_version())
        };
    }
    let mut all: Vec<(u32, &[u8])> = known
        .iter()
        .map(|(tag, v)| (*tag, &v[..]))
        .chain(unknown.iter().map(|(tag, v)| (*tag, &v[..])))
        .collect();
    all.sort_by_key(|(tag, _)| *tag);
    if let Some(w) = all.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(EncodeError::InvalidValue {
            field: at.field,
            detail: format!(
                "tag {} is also a known field of {} at version {}",
                w[0].0, at.api, at.version
            ),
        });
    }
    primitives::put_tagged_fields(buf, all.into_iter())
}

/// Value generators and shared property checks for the generated tests.
#[cfg(test)]
pub(crate) mod testing {
    use bytes::{Bytes, BytesMut};
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    use super::Message;
    use crate::primitives::Uuid;

    /// Proptest cases per message; every case covers every version.
    pub(crate) const CASES: u32 = 64;

    /// A small deterministic generator (SplitMix64) of protocol values, seeded by proptest.
    #[derive(Debug)]
    pub(crate) struct Gen {
        state: u64,
        depth: u32,
    }

    impl Gen {
        pub(crate) fn new(seed: u64) -> Gen {
            Gen {
                state: seed,
                depth: 0,
            }
        }

        fn next(&mut self) -> u64 {
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        pub(crate) fn below(&mut self, n: u64) -> u64 {
            if n == 0 {
                0
            } else {
                self.next() % n
            }
        }

        pub(crate) fn bool(&mut self) -> bool {
            self.next() & 1 == 1
        }

        /// Edge values a third of the time, anything otherwise.
        fn int(&mut self, min: i64, max: i64) -> i64 {
            match self.below(9) {
                0 => 0,
                1 => -1,
                2 => min,
                3 => max,
                4 => 1,
                _ => self.next() as i64,
            }
        }

        pub(crate) fn i8(&mut self) -> i8 {
            self.int(i8::MIN.into(), i8::MAX.into()) as i8
        }

        pub(crate) fn i16(&mut self) -> i16 {
            self.int(i16::MIN.into(), i16::MAX.into()) as i16
        }

        pub(crate) fn i32(&mut self) -> i32 {
            self.int(i32::MIN.into(), i32::MAX.into()) as i32
        }

        pub(crate) fn i64(&mut self) -> i64 {
            self.int(i64::MIN, i64::MAX)
        }

        #[allow(dead_code)] // no u16 field in the current schemas
        pub(crate) fn u16(&mut self) -> u16 {
            self.next() as u16
        }

        #[allow(dead_code)] // no u32 field in the current schemas
        pub(crate) fn u32(&mut self) -> u32 {
            self.next() as u32
        }

        #[allow(dead_code)] // no f64 field in the current schemas
        pub(crate) fn f64(&mut self) -> f64 {
            (self.next() as i64 as f64) / 1024.0
        }

        pub(crate) fn uuid(&mut self) -> Uuid {
            if self.below(4) == 0 {
                return Uuid::NIL;
            }
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&self.next().to_be_bytes());
            id[8..].copy_from_slice(&self.next().to_be_bytes());
            Uuid(id)
        }

        pub(crate) fn string(&mut self) -> String {
            const ALPHABET: &[char] = &['a', 'z', 'A', '0', '-', '.', '_', ' ', 'é', '☃', '𝄞'];
            let len = self.below(9);
            (0..len)
                .map(|_| ALPHABET[self.below(ALPHABET.len() as u64) as usize])
                .collect()
        }

        pub(crate) fn bytes(&mut self) -> Bytes {
            let len = self.below(13);
            (0..len)
                .map(|_| self.next() as u8)
                .collect::<Vec<u8>>()
                .into()
        }

        pub(crate) fn option<T>(&mut self, f: impl FnOnce(&mut Gen) -> T) -> Option<T> {
            if self.below(4) == 0 {
                None
            } else {
                Some(f(self))
            }
        }

        /// Up to three elements near the top of a message, fewer deeper down.
        pub(crate) fn vec<T>(&mut self, mut f: impl FnMut(&mut Gen) -> T) -> Vec<T> {
            let max = 4u64.saturating_sub(u64::from(self.depth)).max(1);
            let len = self.below(max + 1);
            self.depth += 1;
            let v = (0..len).map(|_| f(self)).collect();
            self.depth -= 1;
            v
        }

        /// Tagged fields the schema does not define at all, only in flexible versions.
        pub(crate) fn unknown_tagged_fields(
            &mut self,
            flexible: bool,
            known: &[u32],
        ) -> Vec<(u32, Bytes)> {
            if !flexible || self.below(3) != 0 {
                return Vec::new();
            }
            let mut tags: Vec<u32> = [0u32, 1, 2, 3, 4, 5, 9, 200, 70_000]
                .into_iter()
                .filter(|t| !known.contains(t) && self.bool())
                .collect();
            tags.truncate(3);
            tags.into_iter().map(|t| (t, self.bytes())).collect()
        }
    }

    fn fail(what: &str, version: i16, detail: impl std::fmt::Debug) -> TestCaseError {
        TestCaseError::fail(format!("{what} at version {version}: {detail:?}"))
    }

    /// At every version: encode, decode back to the same value, re-encode to the same bytes; a
    /// strict prefix and a trailing byte are refused; versions outside the range are refused.
    pub(crate) fn round_trip<M: Message>(
        seed: u64,
        arb: fn(&mut Gen, i16) -> M,
    ) -> Result<(), TestCaseError> {
        for version in M::MIN_VERSION..=M::MAX_VERSION {
            let mut g = Gen::new(seed ^ (version as u64).wrapping_mul(0x1000_0001));
            let msg = arb(&mut g, version);
            let mut buf = BytesMut::new();
            msg.encode(&mut buf, version)
                .map_err(|e| fail("encode", version, e))?;
            let bytes = buf.freeze();
            let back = M::decode(&bytes, version).map_err(|e| fail("decode", version, e))?;
            prop_assert_eq!(
                &back,
                &msg,
                "value differs after decoding at version {}",
                version
            );
            let mut again = BytesMut::new();
            back.encode(&mut again, version)
                .map_err(|e| fail("re-encode", version, e))?;
            prop_assert_eq!(
                &again[..],
                &bytes[..],
                "bytes differ after re-encoding at version {}",
                version
            );

            if !bytes.is_empty() {
                let cut = g.below(bytes.len() as u64) as usize;
                prop_assert!(
                    M::decode(&bytes.slice(..cut), version).is_err(),
                    "prefix of {} bytes decoded",
                    cut
                );
            }
            let mut longer = BytesMut::from(&bytes[..]);
            longer.extend_from_slice(&[0]);
            prop_assert_eq!(
                M::decode(&longer.freeze(), version),
                Err(crate::DecodeError::TrailingBytes(1))
            );
        }
        let mut buf = BytesMut::new();
        prop_assert!(M::default().encode(&mut buf, M::MAX_VERSION + 1).is_err());
        prop_assert!(M::decode(&Bytes::new(), M::MIN_VERSION - 1).is_err());
        Ok(())
    }

    /// At every version: random bytes, and a valid body with some bytes overwritten, decode to an
    /// error or to a value that encodes and decodes back to itself; nothing panics.
    pub(crate) fn garbage<M: Message>(
        seed: u64,
        noise: &[u8],
        arb: fn(&mut Gen, i16) -> M,
    ) -> Result<(), TestCaseError> {
        for version in M::MIN_VERSION..=M::MAX_VERSION {
            let _ = M::decode(&Bytes::copy_from_slice(noise), version);
            let mut g = Gen::new(seed ^ version as u64);
            let mut buf = BytesMut::new();
            arb(&mut g, version)
                .encode(&mut buf, version)
                .map_err(|e| fail("encode", version, e))?;
            if buf.is_empty() {
                continue;
            }
            for chunk in noise.chunks(2) {
                if let [pos, value] = chunk {
                    let i = usize::from(*pos) % buf.len();
                    buf[i] = *value;
                }
            }
            if let Ok(decoded) = M::decode(&buf.freeze(), version) {
                let mut again = BytesMut::new();
                decoded
                    .encode(&mut again, version)
                    .map_err(|e| fail("re-encode of a decoded value", version, e))?;
                let back =
                    M::decode(&again.freeze(), version).map_err(|e| fail("decode", version, e))?;
                prop_assert_eq!(back, decoded);
            }
        }
        Ok(())
    }
}
