//! Encoders: the statements writing a field's value into `buf` and each struct's `encode_into`.
//! A field absent at the version being written must hold its default: any other value is an
//! encoding error naming the field, even where Kafka marks it `ignorable`.

use std::fmt::Write as _;

use super::struct_gen::Gen;
use super::types::{is_optional, non_default};
use crate::schema::{Field, Ty};

/// How an array element (`e: &T`) is named in the statements that write it.
fn elem_place(ty: &Ty) -> &'static str {
    match ty {
        Ty::Bool
        | Ty::Int8
        | Ty::Int16
        | Ty::Int32
        | Ty::Int64
        | Ty::Uint16
        | Ty::Uint32
        | Ty::Float64 => "*e",
        _ => "e",
    }
}

impl Gen<'_> {
    /// Statements writing a non-null `v` of `ty` (a place expression of type `T`) into `buf`.
    fn write_base(&self, ty: &Ty, v: &str) -> String {
        match ty {
            Ty::Bool => format!("buf.put_i8(i8::from({v}));"),
            Ty::Int8 => format!("buf.put_i8({v});"),
            Ty::Int16 => format!("buf.put_i16({v});"),
            Ty::Int32 => format!("buf.put_i32({v});"),
            Ty::Int64 => format!("buf.put_i64({v});"),
            Ty::Uint16 => format!("buf.put_u16({v});"),
            Ty::Uint32 => format!("buf.put_u32({v});"),
            Ty::Float64 => format!("buf.put_f64({v});"),
            Ty::Uuid => format!("buf.put_slice(&{v}.0);"),
            Ty::String => format!("primitives::put_str(buf, Some({v}.as_str()), flexible)?;"),
            Ty::Bytes | Ty::Records => {
                format!("primitives::put_bytes(buf, Some(&{v}[..]), flexible)?;")
            }
            Ty::Struct(_) => format!("{v}.encode_into(buf, version)?;"),
            Ty::Array(inner) => format!(
                "write_array(buf, &{v}, flexible, |buf, e| {{ {} Ok(()) }})?;",
                self.write_base(inner, elem_place(inner))
            ),
        }
    }

    fn write_field(&self, f: &Field, v: &str) -> String {
        if !is_optional(f) {
            return self.write_base(&f.ty, v);
        }
        let cond = self.nullable_cond(f);
        let at = self.at(f);
        match &f.ty {
            Ty::String => format!("write_nullable_string(buf, {v}.as_deref(), flexible, {cond}, {at})?;"),
            Ty::Bytes | Ty::Records => {
                format!("write_nullable_bytes(buf, {v}.as_deref(), flexible, {cond}, {at})?;")
            }
            Ty::Array(inner) => format!(
                "write_nullable_array(buf, {v}.as_deref(), flexible, {cond}, {at}, |buf, e| {{ {} Ok(()) }})?;",
                self.write_base(inner, elem_place(inner))
            ),
            Ty::Struct(_) => format!(
                "write_nullable_struct(buf, {v}.as_ref(), {cond}, {at}, |buf, e| e.encode_into(buf, version))?;"
            ),
            other => self.write_base(other, v),
        }
    }

    /// `encode_into`: the untagged fields in order, then the tagged fields section (known fields
    /// that differ from their default, merged with the unknown ones).
    pub(super) fn emit_encode_into(
        &self,
        out: &mut String,
        tagged: &[&Field],
    ) -> Result<(), String> {
        let s = self.s;
        out!(out, "    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {{");
        out!(
            out,
            "        let flexible = {}::is_flexible(version);",
            self.msg.name
        );
        for f in s.fields.iter().filter(|f| f.tag.is_none()) {
            let v = format!("self.{}", f.rust_name);
            let write = self.write_field(f, &v);
            match f.versions.condition(s.context) {
                None => out!(out, "        {write}"),
                Some(cond) => self.emit_only_at(out, f, &cond, &write, &v)?,
            }
        }
        let known = if tagged.is_empty() {
            "Vec::new()"
        } else {
            self.emit_write_known_tagged(out, tagged)?;
            "known"
        };
        out!(out, "        write_tagged_fields(buf, flexible, {known}, &self.unknown_tagged_fields, at(NAME_{}, version, {:?}))", self.msg_const(), self.unknown_label());
        out!(out, "    }}");
        Ok(())
    }

    /// Collects into `known` the (tag, value) of every tagged field that differs from its
    /// default.
    fn emit_write_known_tagged(&self, out: &mut String, tagged: &[&Field]) -> Result<(), String> {
        out!(out, "        let mut known = Vec::new();");
        for f in tagged {
            let v = format!("self.{}", f.rust_name);
            let tag = f.tag.unwrap_or_default();
            let body = format!(
                "if {} {{ let mut value = BytesMut::new(); {{ let buf = &mut value; {} }} known.push(({tag}, value)); }}",
                non_default(f, &v)?,
                self.write_field(f, &v)
            );
            match f.tagged.condition(self.s.context) {
                None => out!(out, "        {body}"),
                Some(cond) => self.emit_only_at(out, f, &cond, &body, &v)?,
            }
        }
        Ok(())
    }

    /// `write` where `cond` (the versions that have the field) holds; elsewhere a value `v` other
    /// than the default is an encoding error naming the field.
    fn emit_only_at(
        &self,
        out: &mut String,
        f: &Field,
        cond: &str,
        write: &str,
        v: &str,
    ) -> Result<(), String> {
        out!(
            out,
            "        if {cond} {{ {write} }} else if {} {{",
            non_default(f, v)?
        );
        out!(
            out,
            "            return Err({}.not_at_version());\n        }}",
            self.at(f)
        );
        Ok(())
    }
}
