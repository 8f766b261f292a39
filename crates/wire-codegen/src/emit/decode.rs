//! Decoders: the expressions reading a field's value (`primitives`, the nullable readers and
//! nested structs' `decode_from`) and each struct's `decode_from`, which reads the untagged fields
//! in order and then the tagged fields section.

use std::fmt::Write as _;

use super::min_size::min_size;
use super::struct_gen::Gen;
use super::types::{default_expr, is_optional};
use crate::schema::{Field, Ty};

impl Gen<'_> {
    /// Expression of type `PResult<'a, T>` reading a non-null value of `ty` from `input`.
    fn read_base(&self, ty: &Ty, input: &str) -> String {
        match ty {
            Ty::Bool => format!("primitives::boolean({input})"),
            Ty::Int8 => format!("primitives::int8({input})"),
            Ty::Int16 => format!("primitives::int16({input})"),
            Ty::Int32 => format!("primitives::int32({input})"),
            Ty::Int64 => format!("primitives::int64({input})"),
            Ty::Uint16 => format!("primitives::uint16({input})"),
            Ty::Uint32 => format!("primitives::uint32({input})"),
            Ty::Float64 => format!("primitives::float64({input})"),
            Ty::Uuid => format!("primitives::uuid({input})"),
            Ty::String => format!("read_string({input}, flexible)"),
            Ty::Bytes | Ty::Records => format!("read_bytes({input}, root, flexible)"),
            Ty::Struct(n) => format!("{n}::decode_from({input}, root, version)"),
            Ty::Array(inner) => format!(
                "read_array({input}, flexible, {}, {})",
                min_size(inner),
                self.elem_reader(inner)
            ),
        }
    }

    fn elem_reader(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "primitives::boolean".into(),
            Ty::Int8 => "primitives::int8".into(),
            Ty::Int16 => "primitives::int16".into(),
            Ty::Int32 => "primitives::int32".into(),
            Ty::Int64 => "primitives::int64".into(),
            Ty::Uint16 => "primitives::uint16".into(),
            Ty::Uint32 => "primitives::uint32".into(),
            Ty::Float64 => "primitives::float64".into(),
            Ty::Uuid => "primitives::uuid".into(),
            other => format!("|i| {}", self.read_base(other, "i")),
        }
    }

    fn read_field(&self, f: &Field, input: &str) -> String {
        if !is_optional(f) {
            return self.read_base(&f.ty, input);
        }
        let cond = self.nullable_cond(f);
        match &f.ty {
            Ty::String => format!("read_nullable_string({input}, flexible, {cond})"),
            Ty::Bytes => format!("read_nullable_bytes({input}, root, flexible, {cond})"),
            Ty::Records => format!("read_nullable_records({input}, root, flexible, {cond})"),
            Ty::Array(inner) => {
                format!(
                    "read_nullable_array({input}, flexible, {cond}, {}, {})",
                    min_size(inner),
                    self.elem_reader(inner)
                )
            }
            Ty::Struct(n) => {
                format!(
                    "read_nullable_struct({input}, {cond}, |i| {n}::decode_from(i, root, version))"
                )
            }
            other => self.read_base(other, input),
        }
    }

    /// `decode_from`: the untagged fields in order, then the tagged fields section, whose known
    /// tags fill their fields and whose other tags are kept as unknown.
    pub(super) fn emit_decode_from(
        &self,
        out: &mut String,
        tagged: &[&Field],
    ) -> Result<(), String> {
        let s = self.s;
        out!(out, "    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {{");
        out!(
            out,
            "        let flexible = {}::is_flexible(version);",
            self.msg.name
        );
        for f in &s.fields {
            if f.tag.is_some() {
                out!(
                    out,
                    "        let mut {} = {};",
                    f.rust_name,
                    default_expr(f)?
                );
                continue;
            }
            let read = self.read_field(f, "input");
            match f.versions.condition(s.context) {
                None => out!(out, "        let (input, {}) = {read}?;", f.rust_name),
                Some(cond) => out!(
                    out,
                    "        let (input, {}) = if {cond} {{ {read}? }} else {{ (input, {}) }};",
                    f.rust_name,
                    default_expr(f)?
                ),
            }
        }
        self.emit_read_tagged(out, tagged);
        out!(out, "        Ok((input, Self {{");
        for f in &s.fields {
            out!(out, "            {},", f.rust_name);
        }
        out!(out, "            unknown_tagged_fields,");
        out!(out, "        }}))");
        out!(out, "    }}\n");
        Ok(())
    }

    /// The loop over the tagged fields section: a known tag (at a version that has it) is read
    /// into its field, any other kept in `unknown_tagged_fields`.
    fn emit_read_tagged(&self, out: &mut String, tagged: &[&Field]) {
        out!(out, "        let mut unknown_tagged_fields = Vec::new();");
        out!(out, "        let (input, raw_tagged) = if flexible {{ primitives::tagged_fields(input)? }} else {{ (input, Vec::new()) }};");
        out!(out, "        for (tag, value) in raw_tagged {{");
        if tagged.is_empty() {
            out!(
                out,
                "            unknown_tagged_fields.push((tag, share(root, value)));"
            );
        } else {
            out!(out, "            match tag {{");
            for f in tagged {
                let tag = f.tag.unwrap_or_default();
                let guard = match f.tagged.condition(self.s.context) {
                    None => String::new(),
                    Some(c) => format!(" if {c}"),
                };
                out!(
                    out,
                    "                {tag}{guard} => {} = read_tagged(value, {:?}, |i| {})?,",
                    f.rust_name,
                    self.label(f),
                    self.read_field(f, "i")
                );
            }
            out!(
                out,
                "                _ => unknown_tagged_fields.push((tag, share(root, value))),"
            );
            out!(out, "            }}");
        }
        out!(out, "        }}");
    }
}
