//! The structs of one API's messages: their declarations, their `Default`s, the impl holding
//! their decoders and encoders, and the `Message`, `Request` and `Response` impls of the two
//! messages.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::min_size::min_size_structs;
use super::struct_gen::Gen;
use super::types::{default_expr, field_doc, is_rust_default, rust_ty};
use crate::schema::{Field, Message};

impl Gen<'_> {
    /// The struct with its doc, its `Default`, and an impl holding `min_encoded_size` (when
    /// needed), `decode_from` and `encode_into`.
    fn emit_struct(&self, out: &mut String) -> Result<(), String> {
        self.emit_struct_doc(out);
        let derive_default = self.derives_default()?;
        self.emit_declaration(out, derive_default);
        if !derive_default {
            self.emit_default_impl(out)?;
        }
        out!(out, "impl {} {{", self.s.name);
        if self.min_size {
            self.emit_min_encoded_size(out);
        }
        let tagged = self.tagged_fields();
        self.emit_decode_from(out, &tagged)?;
        self.emit_encode_into(out, &tagged)?;
        out!(out, "}}\n");
        Ok(())
    }

    /// The struct's doc comment: a message names its API key and versions; a nested struct the
    /// message (or both messages, when shared) it is part of.
    fn emit_struct_doc(&self, out: &mut String) {
        let s = self.s;
        let msg = self.msg;
        if s.is_message {
            out!(
                out,
                "/// {} (API key {}): versions {}, flexible {}.",
                s.name,
                msg.api_key,
                msg.valid.describe(),
                msg.flexible.describe()
            );
            if msg.latest_version_unstable {
                out!(out, "///\n/// Kafka marks the latest version ({}) as unstable: brokers do not advertise it by default.", msg.valid.0.map_or(0, |v| v.1));
            }
        } else if let Some(other) = self.shared_with {
            out!(
                out,
                "/// Part of {} and {} (present in versions {}).",
                msg.name,
                other,
                s.context.describe()
            );
        } else {
            out!(
                out,
                "/// Part of {} (present in versions {}).",
                msg.name,
                s.context.describe()
            );
        }
    }

    /// Whether every field's default is the one `#[derive(Default)]` gives.
    fn derives_default(&self) -> Result<bool, String> {
        let mut all = true;
        for f in &self.s.fields {
            all &= is_rust_default(f)?;
        }
        Ok(all)
    }

    /// The derives and the struct definition: its fields and the unknown tagged fields.
    fn emit_declaration(&self, out: &mut String, derive_default: bool) {
        let s = self.s;
        if derive_default {
            out!(out, "#[derive(Debug, Clone, PartialEq, Default)]");
        } else {
            out!(out, "#[derive(Debug, Clone, PartialEq)]");
        }
        out!(out, "pub struct {} {{", s.name);
        for f in &s.fields {
            out!(out, "    /// {}", field_doc(f));
            out!(out, "    pub {}: {},", f.rust_name, rust_ty(f));
        }
        out!(out, "    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.");
        out!(out, "    pub unknown_tagged_fields: Vec<(u32, Bytes)>,");
        out!(out, "}}\n");
    }

    /// A hand-written `Default` with Kafka's defaults, for a struct that cannot derive one.
    fn emit_default_impl(&self, out: &mut String) -> Result<(), String> {
        let s = self.s;
        out!(out, "impl Default for {} {{", s.name);
        out!(out, "    fn default() -> Self {{");
        out!(out, "        Self {{");
        for f in &s.fields {
            out!(out, "            {}: {},", f.rust_name, default_expr(f)?);
        }
        out!(out, "            unknown_tagged_fields: Vec::new(),");
        out!(out, "        }}\n    }}\n}}\n");
        Ok(())
    }

    /// The tagged fields in tag order, the order they are matched in and written in.
    fn tagged_fields(&self) -> Vec<&Field> {
        let mut tagged: Vec<&Field> = self.s.fields.iter().filter(|f| f.tag.is_some()).collect();
        tagged.sort_by_key(|f| f.tag);
        tagged
    }
}

fn emit_message_impl(out: &mut String, m: &Message, other: &Message) {
    let (lo, hi) = m.valid.0.unwrap_or((0, -1));
    let flex = match m.flexible.min() {
        Some(v) => format!("Some({v})"),
        None => "None".into(),
    };
    out!(out, "impl Message for {} {{", m.name);
    out!(out, "    const NAME: &'static str = {:?};", m.name);
    out!(out, "    const API_KEY: i16 = {};", m.api_key);
    out!(out, "    const MIN_VERSION: i16 = {lo};");
    out!(out, "    const MAX_VERSION: i16 = {hi};");
    out!(
        out,
        "    const FLEXIBLE_MIN_VERSION: Option<i16> = {flex};\n"
    );
    out!(
        out,
        "    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {{"
    );
    out!(out, "        check_encode_version::<Self>(version)?;");
    out!(out, "        self.encode_into(buf, version)");
    out!(out, "    }}\n");
    out!(
        out,
        "    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {{"
    );
    out!(out, "        check_decode_version::<Self>(version)?;");
    out!(
        out,
        "        finish(Self::decode_from(&input[..], input, version))"
    );
    out!(out, "    }}");
    out!(out, "}}\n");
    if m.is_request {
        out!(
            out,
            "impl Request for {} {{\n    type Response = {};\n}}\n",
            m.name,
            other.name
        );
    } else {
        out!(
            out,
            "impl Response for {} {{\n    type Request = {};\n}}\n",
            m.name,
            other.name
        );
    }
}

/// The structs and `Message` impls of both messages; a shared struct is written once, with the
/// request's.
pub(super) fn emit_structs(
    out: &mut String,
    req: &Message,
    resp: &Message,
    shared: &BTreeSet<String>,
) -> Result<(), String> {
    let mut needed_by_both = min_size_structs(req);
    needed_by_both.extend(min_size_structs(resp));
    for (m, other) in [(req, resp), (resp, req)] {
        let needed = min_size_structs(m);
        for (i, s) in m.structs.iter().enumerate() {
            let is_shared = shared.contains(&s.name);
            if is_shared && !m.is_request {
                continue;
            }
            Gen {
                msg: m,
                s,
                min_size: if is_shared {
                    needed_by_both.contains(&s.name)
                } else {
                    needed.contains(&s.name)
                },
                shared_with: is_shared.then_some(other.name.as_str()),
            }
            .emit_struct(out)?;
            if i == 0 {
                emit_message_impl(out, m, other);
            }
        }
    }
    Ok(())
}
