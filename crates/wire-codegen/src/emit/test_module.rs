//! The `#[cfg(test)]` module of a generated file: a value generator per struct (valid at the
//! version asked for), property tests that every message round-trips and survives bad input, and
//! the minimum-size test.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::min_size::emit_min_size_test;
use super::struct_gen::Gen;
use super::types::{default_expr, is_optional};
use crate::schema::{snake, Field, Message, Ty};

/// The whole test module.
pub(super) fn emit_test_module(
    out: &mut String,
    req: &Message,
    resp: &Message,
    shared: &BTreeSet<String>,
) -> Result<(), String> {
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
    emit_property_tests(out, req, resp);
    emit_min_size_test(out, req, resp, shared);
    out!(out, "}}");
    Ok(())
}

/// For each message, a round-trip test and a test that random bytes, and a valid body with bytes
/// overwritten, decode to an error or to a value that round-trips.
fn emit_property_tests(out: &mut String, req: &Message, resp: &Message) {
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
}

impl Gen<'_> {
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
