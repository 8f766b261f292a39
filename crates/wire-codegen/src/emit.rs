//! Turns a resolved [`Message`] pair into Rust source: one file per API holding the request, the
//! response, their nested structs, their encoders and decoders, and (under `#[cfg(test)]`)
//! value generators and property tests.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::schema::{shared_structs, snake, Field, Message, Struct, Ty, Versions};

/// `writeln!` into a `String` cannot fail; this keeps the emitter free of `unwrap`.
macro_rules! out {
    ($dst:expr, $($arg:tt)*) => {{
        let _ = writeln!($dst, $($arg)*);
    }};
}

fn is_optional(f: &Field) -> bool {
    f.ty == Ty::Records || !f.nullable.is_empty()
}

/// The Rust type of a value of `ty` that cannot be null.
fn base_ty(ty: &Ty) -> String {
    match ty {
        Ty::Bool => "bool".into(),
        Ty::Int8 => "i8".into(),
        Ty::Int16 => "i16".into(),
        Ty::Int32 => "i32".into(),
        Ty::Int64 => "i64".into(),
        Ty::Uint16 => "u16".into(),
        Ty::Uint32 => "u32".into(),
        Ty::Float64 => "f64".into(),
        Ty::Uuid => "Uuid".into(),
        Ty::String => "String".into(),
        Ty::Bytes | Ty::Records => "Bytes".into(),
        Ty::Struct(n) => n.clone(),
        Ty::Array(inner) => format!("Vec<{}>", base_ty(inner)),
    }
}

fn rust_ty(f: &Field) -> String {
    if is_optional(f) {
        format!("Option<{}>", base_ty(&f.ty))
    } else {
        base_ty(&f.ty)
    }
}

fn default_str(f: &Field) -> Option<String> {
    match &f.default {
        None => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(v) => Some(v.to_string()),
    }
}

fn int_literal(s: &str, ty: &Ty) -> Result<String, String> {
    let v: i128 = if let Some(hex) = s.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).map_err(|e| e.to_string())?
    } else {
        s.parse().map_err(|e| format!("bad default {s:?}: {e}"))?
    };
    let (rust, min, max): (&str, i128, i128) = match ty {
        Ty::Int8 => ("i8", i8::MIN.into(), i8::MAX.into()),
        Ty::Int16 => ("i16", i16::MIN.into(), i16::MAX.into()),
        Ty::Int32 => ("i32", i32::MIN.into(), i32::MAX.into()),
        Ty::Int64 => ("i64", i64::MIN.into(), i64::MAX.into()),
        Ty::Uint16 => ("u16", 0, u16::MAX.into()),
        Ty::Uint32 => ("u32", 0, u32::MAX.into()),
        _ => return Err(format!("not an integer type: {ty:?}")),
    };
    if v < min || v > max {
        return Err(format!("default {s} out of range for {rust}"));
    }
    Ok(if v == max && v > 0xffff {
        format!("{rust}::MAX")
    } else if v == min && v < -0x8000 {
        format!("{rust}::MIN")
    } else {
        v.to_string()
    })
}

/// The Rust expression of the field's default value (Kafka's default, as the Java classes use).
fn default_expr(f: &Field) -> Result<String, String> {
    let d = default_str(f);
    let null = d.as_deref() == Some("null");
    if null && !is_optional(f) {
        return Err(format!(
            "{}: null default on a non-nullable field",
            f.schema_name
        ));
    }
    Ok(match &f.ty {
        Ty::Bool => match d.as_deref() {
            None | Some("false") => "false".into(),
            Some("true") => "true".into(),
            Some(o) => return Err(format!("bad bool default {o}")),
        },
        Ty::Int8 | Ty::Int16 | Ty::Int32 | Ty::Int64 | Ty::Uint16 | Ty::Uint32 => {
            int_literal(d.as_deref().unwrap_or("0"), &f.ty)?
        }
        Ty::Float64 => {
            let v: f64 = d
                .as_deref()
                .unwrap_or("0")
                .parse()
                .map_err(|e| format!("bad float default: {e}"))?;
            format!("{v:?}")
        }
        Ty::Uuid => "Uuid::NIL".into(),
        Ty::String => {
            let s = match d.as_deref() {
                None | Some("") => "String::new()".to_string(),
                Some("null") => return Ok("None".into()),
                Some(s) => format!("{s:?}.to_owned()"),
            };
            if is_optional(f) {
                format!("Some({s})")
            } else {
                s
            }
        }
        Ty::Records => "None".into(),
        Ty::Bytes => {
            if null {
                "None".into()
            } else if is_optional(f) {
                "Some(Bytes::new())".into()
            } else {
                "Bytes::new()".into()
            }
        }
        Ty::Array(_) => {
            if null {
                "None".into()
            } else if is_optional(f) {
                "Some(Vec::new())".into()
            } else {
                "Vec::new()".into()
            }
        }
        Ty::Struct(n) => {
            if null {
                "None".into()
            } else if is_optional(f) {
                format!("Some({n}::default())")
            } else {
                format!("{n}::default()")
            }
        }
    })
}

/// Whether the default is what `#[derive(Default)]` would give.
fn is_rust_default(f: &Field) -> Result<bool, String> {
    let d = default_expr(f)?;
    Ok(matches!(
        d.as_str(),
        "false"
            | "0"
            | "0.0"
            | "Uuid::NIL"
            | "String::new()"
            | "Bytes::new()"
            | "Vec::new()"
            | "None"
    ) || d.ends_with("::default()"))
}

/// A boolean expression, true when `v` (a place expression) differs from the field's default.
fn non_default(f: &Field, v: &str) -> Result<String, String> {
    let d = default_expr(f)?;
    Ok(match (&f.ty, d.as_str()) {
        (Ty::Bool, "false") => v.to_string(),
        (Ty::Bool, _) => format!("!{v}"),
        (_, "None") => format!("{v}.is_some()"),
        (_, "String::new()" | "Bytes::new()" | "Vec::new()") => format!("!{v}.is_empty()"),
        (_, "Some(String::new())" | "Some(Bytes::new())" | "Some(Vec::new())") => {
            format!("!matches!(&{v}, Some(x) if x.is_empty())")
        }
        (Ty::Uuid, _) => format!("!{v}.is_nil()"),
        (Ty::String, d) if d.ends_with(".to_owned()") => {
            format!("{v} != {}", d.trim_end_matches(".to_owned()"))
        }
        (_, d) => format!("{v} != {d}"),
    })
}

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

fn field_doc(f: &Field) -> String {
    let mut notes = vec![format!("versions {}", f.versions.describe())];
    if !f.nullable.is_empty() {
        notes.push(format!("nullable {}", f.nullable.describe()));
    }
    if let Some(tag) = f.tag {
        notes.push(format!("tagged {} (tag {tag})", f.tagged.describe()));
    }
    if let Some(d) = default_str(f) {
        notes.push(format!("default {d}"));
    }
    let about = f.about.trim().replace('\n', " ");
    let about = if about.is_empty() {
        f.schema_name.clone()
    } else {
        about
    };
    format!("{} ({}).", about.trim_end_matches('.'), notes.join(", "))
}

/// Expression of the fewest bytes a value of `ty` takes on the wire at `version` (`flexible` in
/// scope): what bounds the elements an array's count may pre-allocate. Null and empty values
/// are as short as any.
fn min_size(ty: &Ty) -> String {
    match ty {
        Ty::Bool | Ty::Int8 => "1".into(),
        Ty::Int16 | Ty::Uint16 => "2".into(),
        Ty::Int32 | Ty::Uint32 => "4".into(),
        Ty::Int64 | Ty::Float64 => "8".into(),
        Ty::Uuid => "16".into(),
        Ty::String => "if flexible { 1 } else { 2 }".into(),
        Ty::Bytes | Ty::Records | Ty::Array(_) => "if flexible { 1 } else { 4 }".into(),
        Ty::Struct(n) => format!("{n}::min_encoded_size(version)"),
    }
}

struct Gen<'a> {
    msg: &'a Message,
    s: &'a Struct,
    /// Whether the struct gets a `min_encoded_size` (see [`min_size_structs`]).
    min_size: bool,
    /// The response's name when this request struct is the response's too (see
    /// [`shared_structs`](crate::schema::shared_structs)): its encoding errors then name the API, not one message.
    shared_with: Option<&'a str>,
}

impl Gen<'_> {
    fn field_context(&self, f: &Field) -> Versions {
        f.versions.intersect(self.s.context)
    }

    fn nullable_cond(&self, f: &Field) -> String {
        if f.nullable.is_empty() {
            return "false".into();
        }
        f.nullable
            .condition(self.field_context(f))
            .unwrap_or_else(|| "true".into())
    }

    fn label(&self, f: &Field) -> String {
        if self.s.is_message {
            f.rust_name.trim_start_matches("r#").to_string()
        } else {
            format!("{}.{}", self.s.name, f.rust_name.trim_start_matches("r#"))
        }
    }

    fn at(&self, f: &Field) -> String {
        format!(
            "at(NAME_{}, version, {:?})",
            self.msg_const(),
            self.label(f)
        )
    }

    fn msg_const(&self) -> &'static str {
        if self.shared_with.is_some() {
            "API"
        } else if self.msg.is_request {
            "REQUEST"
        } else {
            "RESPONSE"
        }
    }

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
            Ty::Bytes | Ty::Records => {
                format!("read_nullable_bytes({input}, root, flexible, {cond})")
            }
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

    /// `decode_from`: the untagged fields in order, then the tagged fields section, whose known
    /// tags fill their fields and whose other tags are kept as unknown.
    fn emit_decode_from(&self, out: &mut String, tagged: &[&Field]) -> Result<(), String> {
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

    /// `encode_into`: the untagged fields in order, then the tagged fields section (known fields
    /// that differ from their default, merged with the unknown ones).
    fn emit_encode_into(&self, out: &mut String, tagged: &[&Field]) -> Result<(), String> {
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

    /// `min_encoded_size(version)`: the fewest bytes this struct takes at `version` (its fields
    /// present there at their shortest, tagged fields absent).
    fn emit_min_encoded_size(&self, out: &mut String) {
        let s = self.s;
        out!(
            out,
            "    /// The fewest bytes this struct takes on the wire at `version`."
        );
        out!(
            out,
            "    pub(crate) fn min_encoded_size(version: i16) -> usize {{"
        );
        out!(
            out,
            "        let flexible = {}::is_flexible(version);",
            self.msg.name
        );
        out!(out, "        let mut size = usize::from(flexible);");
        for f in s.fields.iter().filter(|f| f.tag.is_none()) {
            let add = format!("size += {};", self.min_size_field(f));
            match f.versions.condition(s.context) {
                None => out!(out, "        {add}"),
                Some(cond) => out!(out, "        if {cond} {{ {add} }}"),
            }
        }
        out!(out, "        size");
        out!(out, "    }}\n");
    }

    /// Like [`min_size`], for a field: a nullable struct can be its one-byte null indicator.
    fn min_size_field(&self, f: &Field) -> String {
        match (&f.ty, is_optional(f)) {
            (Ty::Struct(_), true) => match self.nullable_cond(f).as_str() {
                "true" => "1".into(),
                cond => format!("if {cond} {{ 1 }} else {{ {} }}", min_size(&f.ty)),
            },
            _ => min_size(&f.ty),
        }
    }

    fn unknown_label(&self) -> String {
        if self.s.is_message {
            "unknown_tagged_fields".into()
        } else {
            format!("{}.unknown_tagged_fields", self.s.name)
        }
    }

    /// Test-only generator of a valid value at `version`.
    fn emit_arbitrary(&self, out: &mut String) -> Result<(), String> {
        let s = self.s;
        let known: Vec<String> = s
            .fields
            .iter()
            .filter_map(|f| f.tag)
            .map(|t| t.to_string())
            .collect();
        out!(
            out,
            "    pub(super) fn arb_{}(g: &mut Gen, version: i16) -> {} {{",
            snake(&s.name).trim_start_matches("r#"),
            s.name
        );
        out!(
            out,
            "        let flexible = {}::is_flexible(version);",
            self.msg.name
        );
        out!(out, "        {} {{", s.name);
        for f in &s.fields {
            let value = self.arb_field(f);
            match f.versions.condition(s.context) {
                None => out!(out, "            {}: {value},", f.rust_name),
                Some(cond) => out!(
                    out,
                    "            {}: if {cond} {{ {value} }} else {{ {} }},",
                    f.rust_name,
                    default_expr(f)?
                ),
            }
        }
        out!(
            out,
            "            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[{}]),",
            known.join(", ")
        );
        out!(out, "        }}\n    }}\n");
        Ok(())
    }

    fn arb_base(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "g.bool()".into(),
            Ty::Int8 => "g.i8()".into(),
            Ty::Int16 => "g.i16()".into(),
            Ty::Int32 => "g.i32()".into(),
            Ty::Int64 => "g.i64()".into(),
            Ty::Uint16 => "g.u16()".into(),
            Ty::Uint32 => "g.u32()".into(),
            Ty::Float64 => "g.f64()".into(),
            Ty::Uuid => "g.uuid()".into(),
            Ty::String => "g.string()".into(),
            Ty::Bytes | Ty::Records => "g.bytes()".into(),
            Ty::Struct(n) => format!("arb_{}(g, version)", snake(n).trim_start_matches("r#")),
            Ty::Array(inner) => format!("g.vec(|g| {})", self.arb_base(inner)),
        }
    }

    fn arb_field(&self, f: &Field) -> String {
        let base = self.arb_base(&f.ty);
        if !is_optional(f) {
            return base;
        }
        match self.nullable_cond(f).as_str() {
            "false" => format!("Some({base})"),
            "true" => format!("g.option(|g| {base})"),
            cond => format!("if {cond} {{ g.option(|g| {base}) }} else {{ Some({base}) }}"),
        }
    }
}

/// The structs of `m` whose `min_encoded_size` is called: the elements of arrays, and the structs
/// that are untagged fields of those, transitively.
fn min_size_structs(m: &Message) -> BTreeSet<String> {
    fn array_elem(ty: &Ty) -> Option<&str> {
        match ty {
            Ty::Array(inner) => match inner.as_ref() {
                Ty::Struct(n) => Some(n),
                other => array_elem(other),
            },
            _ => None,
        }
    }
    let mut needed: BTreeSet<String> = m
        .structs
        .iter()
        .flat_map(|s| &s.fields)
        .filter_map(|f| array_elem(&f.ty).map(str::to_owned))
        .collect();
    loop {
        let more: Vec<String> = m
            .structs
            .iter()
            .filter(|s| needed.contains(&s.name))
            .flat_map(|s| {
                // A struct field nullable wherever it exists is at its shortest a null.
                s.fields.iter().filter(|f| {
                    f.tag.is_none()
                        && (f.nullable.is_empty()
                            || f.nullable
                                .condition(f.versions.intersect(s.context))
                                .is_some())
                })
            })
            .filter_map(|f| match &f.ty {
                Ty::Struct(n) if !needed.contains(n) => Some(n.clone()),
                _ => None,
            })
            .collect();
        if more.is_empty() {
            return needed;
        }
        needed.extend(more);
    }
}

/// A test that each `min_encoded_size` is the length of its default value
/// encoded (empty strings, arrays and bytes, nulls and zeros are as short as values get), at
/// every version it exists in.
fn emit_min_size_test(out: &mut String, req: &Message, resp: &Message, shared: &BTreeSet<String>) {
    out!(out, "    #[test]");
    out!(out, "    fn minimum_sizes_are_those_of_the_defaults() {{");
    for m in [req, resp] {
        let mut needed = min_size_structs(m);
        if m.is_request {
            // A shared struct is tested once, with the request's, if either message needs it.
            needed.extend(min_size_structs(resp).intersection(shared).cloned());
        }
        for s in m
            .structs
            .iter()
            .filter(|s| needed.contains(&s.name) && (m.is_request || !shared.contains(&s.name)))
        {
            let Some((lo, hi)) = s.context.intersect(m.valid).0 else {
                continue;
            };
            out!(out, "        for version in {lo}..={hi} {{");
            out!(out, "            let mut buf = BytesMut::new();");
            out!(out, "            {}::default().encode_into(&mut buf, version).expect(\"a default encodes\");", s.name);
            out!(
                out,
                "            assert_eq!(buf.len(), {}::min_encoded_size(version), \"{} v{{version}}\");",
                s.name,
                s.name
            );
            out!(out, "        }}");
        }
    }
    out!(out, "    }}");
}

fn module_doc(api: &str, req: &Message, resp: &Message) -> String {
    format!(
        "//! {api}: `{}` and `{}` (API key {}), generated from Kafka 4.4.0's `{}.json` and `{}.json`.\n//!\n//! Request versions {}, flexible {}; response versions {}, flexible {}.\n//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).\n",
        req.name,
        resp.name,
        req.api_key,
        req.name,
        resp.name,
        req.valid.describe(),
        req.flexible.describe(),
        resp.valid.describe(),
        resp.flexible.describe()
    )
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
fn emit_structs(
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

/// The whole file for one API.
pub fn api_file(api: &str, req: &Message, resp: &Message) -> Result<String, String> {
    let mut body = String::new();
    let out = &mut body;
    out!(out, "const NAME_REQUEST: &str = {:?};", req.name);
    out!(out, "const NAME_RESPONSE: &str = {:?};", resp.name);
    let shared = shared_structs(api, req, resp)?;
    if !shared.is_empty() {
        out!(
            out,
            "/// Names the API in errors from structs the request and response share."
        );
        out!(out, "const NAME_API: &str = {api:?};");
    }
    out!(out, "");
    emit_structs(out, req, resp, &shared)?;
    out!(out, "#[cfg(test)]");
    out!(out, "pub(crate) mod tests {{");
    out!(out, "    use super::*;");
    out!(
        out,
        "    use crate::messages::testing::{{garbage, round_trip, Gen}};"
    );
    out!(out, "    use proptest::prelude::*;\n");
    for m in [req, resp] {
        for s in &m.structs {
            if m.is_request || !shared.contains(&s.name) {
                Gen {
                    msg: m,
                    s,
                    min_size: false,
                    shared_with: None,
                }
                .emit_arbitrary(out)?;
            }
        }
    }
    out!(out, "    proptest! {{");
    out!(out, "        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]\n");
    for m in [req, resp] {
        let fname = snake(&m.name);
        out!(out, "        #[test]");
        out!(
            out,
            "        fn {fname}_round_trips(seed in any::<u64>()) {{"
        );
        out!(out, "            round_trip(seed, arb_{fname})?;");
        out!(out, "        }}\n");
        out!(out, "        #[test]");
        out!(out, "        fn {fname}_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {{");
        out!(out, "            garbage(seed, &noise, arb_{fname})?;");
        out!(out, "        }}\n");
    }
    out!(out, "    }}\n");
    emit_min_size_test(out, req, resp, &shared);
    out!(out, "}}");
    // Import exactly the helpers the file uses.
    let code_part = body.split("#[cfg(test)]").next().unwrap_or_default();
    let helpers: Vec<&str> = [
        "at",
        "check_decode_version",
        "check_encode_version",
        "finish",
        "read_array",
        "read_bytes",
        "read_nullable_array",
        "read_nullable_bytes",
        "read_nullable_string",
        "read_nullable_struct",
        "read_string",
        "read_tagged",
        "share",
        "write_array",
        "write_nullable_array",
        "write_nullable_bytes",
        "write_nullable_string",
        "write_nullable_struct",
        "write_tagged_fields",
    ]
    .into_iter()
    .filter(|h| code_part.contains(&format!("{h}(")) || code_part.contains(&format!("{h}::<")))
    .collect();
    let mut head = module_doc(api, req, resp);
    out!(head, "\nuse bytes::{{BufMut, Bytes, BytesMut}};\n");
    out!(
        head,
        "use super::{{{}, Message, Request, Response}};",
        helpers.join(", ")
    );
    let mut prims = vec!["self", "PResult"];
    if code_part.contains("Uuid") {
        prims.push("Uuid");
    }
    out!(head, "use crate::primitives::{{{}}};", prims.join(", "));
    out!(head, "use crate::{{DecodeError, EncodeError}};\n");
    Ok(head + &body)
}
