//! [`Gen`]: one struct being written, with what naming and error labels need to know about it.
//! Each part of the emitter (declarations, decoders, encoders, minimum sizes, tests) adds its own
//! methods to it.

use crate::schema::{Field, Message, Struct, Versions};

/// One struct being written, with the message it belongs to.
pub(super) struct Gen<'a> {
    pub(super) msg: &'a Message,
    pub(super) s: &'a Struct,
    /// Whether the struct gets a `min_encoded_size` (see [`min_size_structs`](super::min_size::min_size_structs)).
    pub(super) min_size: bool,
    /// The response's name when this request struct is the response's too (see
    /// [`shared_structs`](crate::schema::shared_structs)): its encoding errors then name the API, not one message.
    pub(super) shared_with: Option<&'a str>,
}

impl Gen<'_> {
    fn field_context(&self, f: &Field) -> Versions {
        f.versions.intersect(self.s.context)
    }

    pub(super) fn nullable_cond(&self, f: &Field) -> String {
        if f.nullable.is_empty() {
            return "false".into();
        }
        f.nullable
            .condition(self.field_context(f))
            .unwrap_or_else(|| "true".into())
    }

    pub(super) fn label(&self, f: &Field) -> String {
        if self.s.is_message {
            f.rust_name.trim_start_matches("r#").to_string()
        } else {
            format!("{}.{}", self.s.name, f.rust_name.trim_start_matches("r#"))
        }
    }

    pub(super) fn at(&self, f: &Field) -> String {
        format!(
            "at(NAME_{}, version, {:?})",
            self.msg_const(),
            self.label(f)
        )
    }

    pub(super) fn msg_const(&self) -> &'static str {
        if self.shared_with.is_some() {
            "API"
        } else if self.msg.is_request {
            "REQUEST"
        } else {
            "RESPONSE"
        }
    }

    pub(super) fn unknown_label(&self) -> String {
        if self.s.is_message {
            "unknown_tagged_fields".into()
        } else {
            format!("{}.unknown_tagged_fields", self.s.name)
        }
    }
}
