//! Turns a resolved [`Message`] pair into Rust source: one file per API holding the request, the
//! response, their nested structs, their encoders and decoders, and (under `#[cfg(test)]`)
//! value generators and property tests.
//!
//! This module writes a file's head (doc, imports, message names) and puts the parts together;
//! each part has a module of its own:
//!
//! - `structs`: the struct declarations, `Default`s and `Message` impls;
//! - `decode` and `encode`: each struct's `decode_from` and `encode_into`;
//! - `min_size`: the `min_encoded_size` that bounds what an array's count may reserve;
//! - `test_module`: the value generators and property tests;
//! - `types`: a field's Rust type, default value and doc, which all of them use.

use std::fmt::Write as _;

use crate::schema::{shared_structs, Message};

/// `writeln!` into a `String` cannot fail; this keeps the emitter free of `unwrap`.
macro_rules! out {
    ($dst:expr, $($arg:tt)*) => {{
        let _ = writeln!($dst, $($arg)*);
    }};
}

mod decode;
mod encode;
mod min_size;
mod struct_gen;
mod structs;
mod test_module;
mod types;

/// The helpers of `messages/mod.rs` a generated file may call; it imports those it does.
const HELPERS: &[&str] = &[
    "at",
    "check_decode_version",
    "check_encode_version",
    "finish",
    "read_array",
    "read_bytes",
    "read_nullable_array",
    "read_nullable_bytes",
    "read_nullable_records",
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
];

/// The whole file for one API.
pub fn api_file(api: &str, req: &Message, resp: &Message) -> Result<String, String> {
    let mut body = String::new();
    let out = &mut body;
    let shared = shared_structs(api, req, resp)?;
    emit_names(out, api, req, resp, !shared.is_empty());
    structs::emit_structs(out, req, resp, &shared)?;
    test_module::emit_test_module(out, req, resp, &shared)?;
    let code_part = body.split("#[cfg(test)]").next().unwrap_or_default();
    Ok(file_head(api, req, resp, code_part) + &body)
}

/// The message names encoding errors cite, and the API's name when structs are shared.
fn emit_names(out: &mut String, api: &str, req: &Message, resp: &Message, shares_structs: bool) {
    out!(out, "const NAME_REQUEST: &str = {:?};", req.name);
    out!(out, "const NAME_RESPONSE: &str = {:?};", resp.name);
    if shares_structs {
        out!(
            out,
            "/// Names the API in errors from structs the request and response share."
        );
        out!(out, "const NAME_API: &str = {api:?};");
    }
    out!(out, "");
}

/// The module doc and the imports, exactly the helpers and primitives `code_part` (the file
/// without its test module) uses.
fn file_head(api: &str, req: &Message, resp: &Message, code_part: &str) -> String {
    let helpers: Vec<&str> = HELPERS
        .iter()
        .copied()
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
    head
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
