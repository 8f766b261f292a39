//! The Rust side of a schema field: its type, its default value (as the Java classes default it),
//! the test for a value differing from that default, and its doc comment. Shared by the struct,
//! decoder, encoder and test emitters, so every one of them spells a field the same way.

use crate::schema::{Field, Ty};

pub(super) fn is_optional(f: &Field) -> bool {
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

pub(super) fn rust_ty(f: &Field) -> String {
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
pub(super) fn default_expr(f: &Field) -> Result<String, String> {
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
        // Java's default is null, which a version where the field is not nullable cannot carry
        // (ShareFetch's records are nullable only at v0): there the default is no records.
        Ty::Records if f.versions.intersect(f.nullable) == f.versions => "None".into(),
        Ty::Records => "Some(Bytes::new())".into(),
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
pub(super) fn is_rust_default(f: &Field) -> Result<bool, String> {
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
pub(super) fn non_default(f: &Field, v: &str) -> Result<String, String> {
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

pub(super) fn field_doc(f: &Field) -> String {
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
