//! Minimum encoded sizes: `min_encoded_size(version)` for the structs an array holds, and the test
//! that each equals the length of its encoded default. A decoder reserves no more elements for an
//! array's count than the bytes left hold at this size, so a count read off the wire cannot make
//! it allocate more than the input could fill.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::struct_gen::Gen;
use super::types::is_optional;
use crate::schema::{Field, Message, Ty};

/// Expression of the fewest bytes a value of `ty` takes on the wire at `version` (`flexible` in
/// scope): what bounds the elements an array's count may pre-allocate. Null and empty values
/// are as short as any.
pub(super) fn min_size(ty: &Ty) -> String {
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

impl Gen<'_> {
    /// `min_encoded_size(version)`: the fewest bytes this struct takes at `version` (its fields
    /// present there at their shortest, tagged fields absent).
    pub(super) fn emit_min_encoded_size(&self, out: &mut String) {
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
}

/// The structs of `m` whose `min_encoded_size` is called: the elements of arrays, and the structs
/// that are untagged fields of those, transitively.
pub(super) fn min_size_structs(m: &Message) -> BTreeSet<String> {
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
pub(super) fn emit_min_size_test(
    out: &mut String,
    req: &Message,
    resp: &Message,
    shared: &BTreeSet<String>,
) {
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
