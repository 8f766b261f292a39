//! Kafka's message schema JSON (`clients/src/main/resources/common/message/*.json`), parsed into
//! the few notions the emitter needs: version ranges, field types, nullability and tags.

use std::collections::BTreeSet;

use serde::Deserialize;

/// An inclusive version range; `None` means "no versions".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions(pub Option<(i16, i16)>);

impl Versions {
    pub const NONE: Versions = Versions(None);

    /// Parses `"3+"`, `"0-7"`, `"5"` or `"none"`.
    pub fn parse(s: &str) -> Result<Versions, String> {
        let s = s.trim();
        let num = |t: &str| {
            t.trim()
                .parse::<i16>()
                .map_err(|e| format!("bad version {s:?}: {e}"))
        };
        if s == "none" {
            Ok(Versions::NONE)
        } else if let Some(lo) = s.strip_suffix('+') {
            Ok(Versions(Some((num(lo)?, i16::MAX))))
        } else if let Some((lo, hi)) = s.split_once('-') {
            Ok(Versions(Some((num(lo)?, num(hi)?))))
        } else {
            let v = num(s)?;
            Ok(Versions(Some((v, v))))
        }
    }

    pub fn intersect(self, other: Versions) -> Versions {
        match (self.0, other.0) {
            (Some((a, b)), Some((c, d))) if a.max(c) <= b.min(d) => {
                Versions(Some((a.max(c), b.min(d))))
            }
            _ => Versions::NONE,
        }
    }

    pub fn is_empty(self) -> bool {
        self.0.is_none()
    }

    pub fn min(self) -> Option<i16> {
        self.0.map(|(a, _)| a)
    }

    /// Human form for docs: `"3+"`, `"0-7"`, `"5"`, `"none"`.
    pub fn describe(self) -> String {
        match self.0 {
            None => "none".into(),
            Some((a, i16::MAX)) => format!("{a}+"),
            Some((a, b)) if a == b => format!("{a}"),
            Some((a, b)) => format!("{a}-{b}"),
        }
    }

    /// A Rust boolean expression over `version` that is true exactly in `self`, knowing that
    /// `version` is already within `context`. `None` when it is always true there.
    pub fn condition(self, context: Versions) -> Option<String> {
        let Some((ctx_lo, ctx_hi)) = context.0 else {
            return Some("false".into());
        };
        let Some((lo, hi)) = self.intersect(context).0 else {
            return Some("false".into());
        };
        match (lo > ctx_lo, hi < ctx_hi) {
            (false, false) => None,
            (true, false) => Some(format!("version >= {lo}")),
            (false, true) => Some(format!("version <= {hi}")),
            (true, true) if lo == hi => Some(format!("version == {lo}")),
            (true, true) => Some(format!("({lo}..={hi}).contains(&version)")),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawMessage {
    pub api_key: i16,
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub valid_versions: String,
    pub flexible_versions: String,
    #[serde(default)]
    pub fields: Vec<RawField>,
    #[serde(default)]
    pub common_structs: Vec<RawStruct>,
    #[serde(default)]
    pub latest_version_unstable: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawStruct {
    pub name: String,
    #[serde(default)]
    pub fields: Vec<RawField>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawField {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub versions: String,
    #[serde(default)]
    pub nullable_versions: Option<String>,
    #[serde(default)]
    pub tagged_versions: Option<String>,
    #[serde(default)]
    pub tag: Option<u32>,
    #[serde(default)]
    pub default: Option<serde_json::Value>,
    #[serde(default)]
    pub about: Option<String>,
    #[serde(default)]
    pub flexible_versions: Option<String>,
    #[serde(default)]
    pub fields: Option<Vec<RawField>>,
}

/// Strips the `//` comment lines Kafka puts in its schema files, then parses the JSON.
pub fn parse_message(text: &str) -> Result<RawMessage, String> {
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).map_err(|e| e.to_string())
}

/// A field type.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint16,
    Uint32,
    Float64,
    Uuid,
    String,
    Bytes,
    Records,
    Struct(String),
    Array(Box<Ty>),
}

impl Ty {
    pub fn parse(s: &str) -> Result<Ty, String> {
        if let Some(inner) = s.strip_prefix("[]") {
            return Ok(Ty::Array(Box::new(Ty::parse(inner)?)));
        }
        Ok(match s {
            "bool" => Ty::Bool,
            "int8" => Ty::Int8,
            "int16" => Ty::Int16,
            "int32" => Ty::Int32,
            "int64" => Ty::Int64,
            "uint16" => Ty::Uint16,
            "uint32" => Ty::Uint32,
            "float64" => Ty::Float64,
            "uuid" => Ty::Uuid,
            "string" => Ty::String,
            "bytes" => Ty::Bytes,
            "records" => Ty::Records,
            s if s.starts_with(|c: char| c.is_ascii_uppercase()) => Ty::Struct(s.to_string()),
            s => return Err(format!("unknown field type {s:?}")),
        })
    }
}

/// A field, resolved against its message.
#[derive(Debug, Clone)]
pub struct Field {
    pub schema_name: String,
    pub rust_name: String,
    pub ty: Ty,
    pub versions: Versions,
    pub nullable: Versions,
    pub tag: Option<u32>,
    pub tagged: Versions,
    pub default: Option<serde_json::Value>,
    pub about: String,
}

/// A struct: the message itself, an inline struct, or a common struct.
#[derive(Debug, Clone)]
pub struct Struct {
    pub name: String,
    pub fields: Vec<Field>,
    /// Versions in which this struct can appear.
    pub context: Versions,
    pub is_message: bool,
}

/// A message with all its structs, the message first.
#[derive(Debug, Clone)]
pub struct Message {
    pub name: String,
    pub api_key: i16,
    pub is_request: bool,
    pub valid: Versions,
    pub flexible: Versions,
    pub structs: Vec<Struct>,
    pub latest_version_unstable: bool,
}

pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else",
        "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod",
        "move", "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait",
        "true", "try", "type", "unsafe", "use", "where", "while", "yield",
    ];
    if KEYWORDS.contains(&out.as_str()) {
        out.insert_str(0, "r#");
    }
    out
}

fn resolve_fields(
    raw: &[RawField],
    message: &str,
    flexible: Versions,
    context: Versions,
    structs: &mut Vec<Struct>,
) -> Result<Vec<Field>, String> {
    let mut fields = Vec::new();
    for f in raw {
        let ty = Ty::parse(&f.ty)?;
        let versions = Versions::parse(&f.versions)?;
        let nullable = match &f.nullable_versions {
            Some(s) => Versions::parse(s)?.intersect(versions),
            None => Versions::NONE,
        };
        let tagged = match &f.tagged_versions {
            Some(s) => Versions::parse(s)?,
            None => Versions::NONE,
        };
        if f.tag.is_some() == tagged.is_empty() {
            return Err(format!(
                "{message}.{}: tag and taggedVersions must come together",
                f.name
            ));
        }
        if !tagged.is_empty() && tagged.intersect(context) != versions.intersect(context) {
            return Err(format!(
                "{message}.{}: fields that are tagged at some versions only are not supported",
                f.name
            ));
        }
        if f.flexible_versions.is_some() {
            return Err(format!(
                "{message}.{}: per-field flexibleVersions is not supported",
                f.name
            ));
        }
        if !tagged.is_empty() && tagged.intersect(flexible) != tagged {
            return Err(format!(
                "{message}.{}: tagged outside flexible versions",
                f.name
            ));
        }
        let field_context = versions.intersect(context);
        if let Some(sub) = &f.fields {
            let name = match &ty {
                Ty::Struct(n) => n.clone(),
                Ty::Array(inner) => match &**inner {
                    Ty::Struct(n) => n.clone(),
                    _ => return Err(format!("{message}.{}: fields on a non-struct type", f.name)),
                },
                _ => return Err(format!("{message}.{}: fields on a non-struct type", f.name)),
            };
            if structs.iter().any(|s| s.name == name) {
                return Err(format!("{message}: struct {name} defined twice"));
            }
            let index = structs.len();
            structs.push(Struct {
                name: name.clone(),
                fields: Vec::new(),
                context: field_context,
                is_message: false,
            });
            let sub = resolve_fields(sub, message, flexible, field_context, structs)?;
            structs[index].fields = sub;
        }
        // An untagged nullable struct is a one-byte null indicator before the struct (Java's
        // generator); a tagged one would be a varint, which no schema generated here uses.
        if matches!(ty, Ty::Struct(_)) && !nullable.is_empty() && !tagged.is_empty() {
            return Err(format!(
                "{message}.{}: tagged nullable struct fields are not supported",
                f.name
            ));
        }
        fields.push(Field {
            schema_name: f.name.clone(),
            rust_name: snake(&f.name),
            ty,
            versions,
            nullable,
            tag: f.tag,
            tagged,
            default: f.default.clone(),
            about: f.about.clone().unwrap_or_default(),
        });
    }
    Ok(fields)
}

impl Message {
    pub fn from_raw(raw: &RawMessage) -> Result<Message, String> {
        let valid = Versions::parse(&raw.valid_versions)?;
        let flexible = Versions::parse(&raw.flexible_versions)?;
        let mut structs = vec![Struct {
            name: raw.name.clone(),
            fields: Vec::new(),
            context: valid,
            is_message: true,
        }];
        for common in &raw.common_structs {
            let index = structs.len();
            structs.push(Struct {
                name: common.name.clone(),
                fields: Vec::new(),
                context: valid,
                is_message: false,
            });
            let fields = resolve_fields(&common.fields, &raw.name, flexible, valid, &mut structs)?;
            structs[index].fields = fields;
        }
        let fields = resolve_fields(&raw.fields, &raw.name, flexible, valid, &mut structs)?;
        structs[0].fields = fields;
        // Every referenced struct must be defined.
        for s in &structs {
            for f in &s.fields {
                let name = match &f.ty {
                    Ty::Struct(n) => Some(n),
                    Ty::Array(inner) => match &**inner {
                        Ty::Struct(n) => Some(n),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(n) = name {
                    if !structs.iter().any(|s| &s.name == n) {
                        return Err(format!("{}: struct {n} is not defined", raw.name));
                    }
                }
            }
        }
        Ok(Message {
            name: raw.name.clone(),
            api_key: raw.api_key,
            is_request: match raw.kind.as_str() {
                "request" => true,
                "response" => false,
                k => return Err(format!("{}: unexpected message type {k}", raw.name)),
            },
            valid,
            flexible: flexible.intersect(valid),
            structs,
            latest_version_unstable: raw.latest_version_unstable,
        })
    }
}

/// Whether two structs of the same name are the same on the wire at every version: the same
/// fields (docs aside) in the same versions.
fn same_shape(a: &Struct, b: &Struct) -> bool {
    a.context == b.context
        && a.fields.len() == b.fields.len()
        && a.fields.iter().zip(&b.fields).all(|(x, y)| {
            (
                &x.schema_name,
                &x.ty,
                x.versions,
                x.nullable,
                x.tag,
                x.tagged,
                &x.default,
            ) == (
                &y.schema_name,
                &y.ty,
                y.versions,
                y.nullable,
                y.tag,
                y.tagged,
                &y.default,
            )
        })
}

/// The struct names the request and the response both define (a common struct such as
/// `TopicPartitions`). Each becomes one Rust type, which needs the two definitions to agree on the
/// wire, the messages to agree on flexible versions, and every struct it holds to be shared too;
/// any other clash of names is an error.
pub fn shared_structs(
    api: &str,
    req: &Message,
    resp: &Message,
) -> Result<BTreeSet<String>, String> {
    let mut shared = BTreeSet::new();
    for s in &resp.structs {
        if let Some(r) = req.structs.iter().find(|r| r.name == s.name) {
            if req.flexible != resp.flexible || !same_shape(r, s) {
                return Err(format!(
                    "{api}: struct {} defined differently in request and response",
                    s.name
                ));
            }
            shared.insert(s.name.clone());
        }
    }
    for name in &shared {
        let Some(s) = req.structs.iter().find(|s| &s.name == name) else {
            continue;
        };
        for f in &s.fields {
            let held = match &f.ty {
                Ty::Struct(n) => Some(n),
                Ty::Array(inner) => match inner.as_ref() {
                    Ty::Struct(n) => Some(n),
                    _ => None,
                },
                _ => None,
            };
            if let Some(n) = held.filter(|n| !shared.contains(*n)) {
                return Err(format!(
                    "{api}: shared struct {name} holds {n}, which is not shared"
                ));
            }
        }
    }
    Ok(shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_ranges_and_conditions() {
        let v = |s| Versions::parse(s).expect("valid range");
        assert_eq!(v("3+"), Versions(Some((3, i16::MAX))));
        assert_eq!(v("0-7"), Versions(Some((0, 7))));
        assert_eq!(v("5"), Versions(Some((5, 5))));
        assert!(v("none").is_empty());
        let valid = v("4-18");
        assert_eq!(v("0+").condition(valid), None);
        assert_eq!(v("7+").condition(valid).as_deref(), Some("version >= 7"));
        assert_eq!(v("0-12").condition(valid).as_deref(), Some("version <= 12"));
        assert_eq!(
            v("7-12").condition(valid).as_deref(),
            Some("(7..=12).contains(&version)")
        );
        assert_eq!(v("0-2").condition(valid).as_deref(), Some("false"));
        assert_eq!(v("3+").describe(), "3+");
    }

    #[test]
    fn names_become_snake_case() {
        assert_eq!(snake("ThrottleTimeMs"), "throttle_time_ms");
        assert_eq!(snake("timeoutMs"), "timeout_ms");
        assert_eq!(snake("IsrNodes"), "isr_nodes");
        assert_eq!(snake("Type"), "r#type");
    }

    #[test]
    fn comment_lines_are_stripped() {
        let m = parse_message(
            "// Licensed...\n{ \"apiKey\": 12, \"type\": \"request\", \"name\": \"HeartbeatRequest\",\n  // note\n  \"validVersions\": \"0-4\", \"flexibleVersions\": \"4+\", \"fields\": [] }",
        )
        .expect("parses");
        assert_eq!((m.api_key, m.name.as_str()), (12, "HeartbeatRequest"));
    }

    fn message(kind: &str, fields: &str, common: &str) -> Result<Message, String> {
        let name = if kind == "request" {
            "TRequest"
        } else {
            "TResponse"
        };
        let text = format!(
            "{{ \"apiKey\": 99, \"type\": \"{kind}\", \"name\": \"{name}\", \"validVersions\": \"0-1\", \"flexibleVersions\": \"0+\", \"fields\": [{fields}], \"commonStructs\": [{common}] }}"
        );
        Message::from_raw(&parse_message(&text)?)
    }

    const PARTS: &str = "{ \"name\": \"Parts\", \"versions\": \"0+\", \"fields\": [ { \"name\": \"Id\", \"type\": \"uuid\", \"versions\": \"0+\" } ] }";

    #[test]
    fn nullable_structs_are_read_unless_tagged() {
        let m = message(
            "response",
            "{ \"name\": \"P\", \"type\": \"Parts\", \"versions\": \"0+\", \"nullableVersions\": \"1+\", \"default\": \"null\" }",
            PARTS,
        )
        .expect("an untagged nullable struct");
        assert_eq!(
            m.structs[0].fields[0].nullable,
            Versions(Some((1, i16::MAX)))
        );
        let tagged = message(
            "response",
            "{ \"name\": \"P\", \"type\": \"Parts\", \"versions\": \"0+\", \"nullableVersions\": \"0+\", \"taggedVersions\": \"0+\", \"tag\": 0, \"default\": \"null\" }",
            PARTS,
        );
        assert!(tagged.is_err_and(|e| e.contains("tagged nullable struct")));
    }

    #[test]
    fn a_struct_both_messages_define_alike_is_shared() {
        let field = "{ \"name\": \"P\", \"type\": \"[]Parts\", \"versions\": \"0+\" }";
        let req = message("request", field, PARTS).expect("request");
        let resp = message("response", field, PARTS).expect("response");
        let shared = shared_structs("T", &req, &resp).expect("alike");
        assert_eq!(
            shared.into_iter().collect::<Vec<_>>(),
            vec!["Parts".to_string()]
        );
        let other = PARTS.replace("uuid", "int32");
        let resp = message("response", field, &other).expect("response");
        assert!(shared_structs("T", &req, &resp).is_err_and(|e| e.contains("differently")));
    }
}
