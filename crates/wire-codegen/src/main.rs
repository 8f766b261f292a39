//! `mooring-wire-codegen`: generates `crates/wire/src/messages/` from Kafka's message schemas.
//!
//! Kafka describes every request and response in a JSON schema (`common/message/*.json`, shipped
//! inside the `kafka-clients` jar). Those schemas are the source of truth for mooring-wire's
//! messages: this program reads them and writes one Rust file per API (request, response, nested
//! structs, encoders, decoders and property tests), the `messages/mod.rs` that ties them together,
//! and the version table in `crates/wire/README.md`. The generated files are committed, so building
//! mooring-wire needs neither this program nor the jar.
//!
//! # Regenerating
//!
//! ```sh
//! cargo run -p mooring-wire-codegen -- /path/to/kafka-clients-4.4.0.jar
//! # or, with the schemas already extracted:
//! cargo run -p mooring-wire-codegen -- /path/to/dir/holding/common/message
//! ```
//!
//! The output goes to `crates/wire/src/messages/` (override with `--out DIR`) and is formatted
//! with `rustfmt`. Which APIs are generated is the `APIS` list below; every version in a schema's
//! `validVersions` is generated. Review the diff, run `cargo test -p mooring-wire`, commit.
//!
//! The generated code follows the Java classes' wire behaviour (defaults, tagged fields written
//! only when they differ from their default, unknown tagged fields kept and merged in tag order)
//! with one deliberate difference: a field that does not exist at the requested version but holds
//! a non-default value is an encoding error even when Kafka marks it `ignorable`.

mod emit;
mod jar;
mod schema;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use schema::{snake, Message};

/// The APIs mooring-wire implements (schema base names, without `Request`/`Response`).
const APIS: &[&str] = &[
    "Produce",
    "Fetch",
    "ListOffsets",
    "Metadata",
    "OffsetCommit",
    "OffsetFetch",
    "FindCoordinator",
    "JoinGroup",
    "Heartbeat",
    "LeaveGroup",
    "SyncGroup",
    "DescribeGroups",
    "ListGroups",
    "SaslHandshake",
    "ApiVersions",
    "CreateTopics",
    "DeleteTopics",
    "SaslAuthenticate",
    "ConsumerGroupHeartbeat",
    "ConsumerGroupDescribe",
    "IncrementalAlterConfigs",
    "ShareGroupHeartbeat",
    "ShareGroupDescribe",
    "ShareFetch",
    "ShareAcknowledge",
    "DescribeShareGroupOffsets",
    "DescribeConfigs",
    "GetTelemetrySubscriptions",
    "PushTelemetry",
];

const README_START: &str = "<!-- generated-messages-table:start -->";
const README_END: &str = "<!-- generated-messages-table:end -->";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mooring-wire-codegen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> String {
    "usage: mooring-wire-codegen <kafka-clients.jar | schema dir> [--out DIR] [--readme FILE]"
        .into()
}

fn run() -> Result<(), String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = manifest.join("../wire/src/messages");
    let mut readme = manifest.join("../wire/README.md");
    let mut source = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = args.next().ok_or_else(usage)?.into(),
            "--readme" => readme = args.next().ok_or_else(usage)?.into(),
            "-h" | "--help" => {
                println!("{}", usage());
                return Ok(());
            }
            _ if source.is_none() => source = Some(PathBuf::from(arg)),
            _ => return Err(usage()),
        }
    }
    let source = source.ok_or_else(usage)?;
    let schemas = load_schemas(&source)?;

    let mut pairs = Vec::new();
    for api in APIS {
        let get = |suffix: &str| -> Result<Message, String> {
            let name = format!("{api}{suffix}");
            let text = schemas
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t)
                .ok_or_else(|| format!("no schema {name}.json in {}", source.display()))?;
            let raw = schema::parse_message(text).map_err(|e| format!("{name}.json: {e}"))?;
            Message::from_raw(&raw).map_err(|e| format!("{name}.json: {e}"))
        };
        let (req, resp) = (get("Request")?, get("Response")?);
        if req.api_key != resp.api_key {
            return Err(format!("{api}: request and response API keys differ"));
        }
        pairs.push((*api, req, resp));
    }
    pairs.sort_by_key(|(_, req, _)| req.api_key);

    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut written = Vec::new();
    for (api, req, resp) in &pairs {
        let code = emit::api_file(api, req, resp).map_err(|e| format!("{api}: {e}"))?;
        let path = out.join(format!("{}.rs", module_name(api)));
        write(&path, &code)?;
        written.push(path);
    }
    let path = out.join("mod.rs");
    write(&path, &mod_file(&pairs))?;
    written.push(path);
    format(&written)?;
    update_readme(&readme, &pairs)?;
    eprintln!("wrote {} files to {}", written.len(), out.display());
    Ok(())
}

fn module_name(api: &str) -> String {
    snake(api).trim_start_matches("r#").to_string()
}

/// (file stem, contents) of every `common/message/*.json` in a jar or a directory.
fn load_schemas(source: &Path) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    if source.is_dir() {
        let dir = if source.join("common/message").is_dir() {
            source.join("common/message")
        } else {
            source.to_path_buf()
        };
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|x| x == "json") {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push((stem, text));
            }
        }
    } else {
        let data = std::fs::read(source).map_err(|e| format!("{}: {e}", source.display()))?;
        let entries = jar::entries(&data, |n| {
            n.starts_with("common/message/") && n.ends_with(".json")
        })?;
        for (name, bytes) in entries {
            let stem = name
                .trim_start_matches("common/message/")
                .trim_end_matches(".json")
                .to_string();
            let text = String::from_utf8(bytes).map_err(|_| format!("{name} is not UTF-8"))?;
            out.push((stem, text));
        }
    }
    if out.is_empty() {
        return Err(format!("no message schemas found in {}", source.display()));
    }
    Ok(out)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn format(paths: &[PathBuf]) -> Result<(), String> {
    let status = std::process::Command::new("rustfmt")
        .args(["--edition", "2021"])
        .args(paths)
        .status()
        .map_err(|e| format!("running rustfmt: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("rustfmt failed: {status}"))
    }
}

/// `messages/mod.rs`: the module doc and imports, one module and re-export per API, the `ApiKey`
/// enum with its methods, then the shared helpers of `templates/support.rs`.
fn mod_file(pairs: &[(&str, Message, Message)]) -> String {
    let mut s = String::new();
    s.push_str(
        "//! Kafka request and response bodies, generated from Kafka 4.4.0's message schemas by\n\
         //! `mooring-wire-codegen` (do not edit by hand: see that crate's documentation to regenerate).\n\
         //!\n\
         //! One module per API, each holding the request, the response and their nested structs, with\n\
         //! every version of the schema's `validVersions`. Every message implements [`Message`]\n\
         //! (`encode`/`decode` at an explicit version) and [`Request`] or [`Response`].\n\
         //! See <https://kafka.apache.org/protocol#protocol_messages> and KIP-482 for flexible versions.\n\n",
    );
    s.push_str("use bytes::{BufMut, Bytes, BytesMut};\n\nuse crate::primitives::{self, PResult};\nuse crate::{DecodeError, EncodeError};\n\n");
    api_modules(&mut s, pairs);
    api_key_enum(&mut s, pairs);
    api_key_impl(&mut s, pairs);
    s.push_str(include_str!("../templates/support.rs"));
    s
}

/// `pub mod` for every API, then the re-exports of its request and response.
fn api_modules(s: &mut String, pairs: &[(&str, Message, Message)]) {
    for (api, _, _) in pairs {
        let _ = writeln!(s, "pub mod {};", module_name(api));
    }
    s.push('\n');
    for (api, req, resp) in pairs {
        let _ = writeln!(
            s,
            "pub use {}::{{{}, {}}};",
            module_name(api),
            req.name,
            resp.name
        );
    }
}

/// The `ApiKey` enum: one variant per API, its discriminant the API key.
fn api_key_enum(s: &mut String, pairs: &[(&str, Message, Message)]) {
    s.push_str("\n/// The APIs this crate implements, with their Kafka API keys.\n");
    s.push_str(
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\npub enum ApiKey {\n",
    );
    for (api, req, _) in pairs {
        let _ = writeln!(
            s,
            "    /// `{api}` (key {}), requests v{}.",
            req.api_key,
            req.valid.describe()
        );
        let _ = writeln!(s, "    {api} = {},", req.api_key);
    }
    s.push_str("}\n\n");
}

/// `impl ApiKey`: `ALL`, `from_i16`, `code`, the per-API tables (name, versions, first flexible
/// version) and `is_flexible`.
fn api_key_impl(s: &mut String, pairs: &[(&str, Message, Message)]) {
    s.push_str("impl ApiKey {\n");
    let _ = writeln!(
        s,
        "    /// Every API this crate implements, by key.\n    pub const ALL: [ApiKey; {}] = [",
        pairs.len()
    );
    for (api, _, _) in pairs {
        let _ = writeln!(s, "        ApiKey::{api},");
    }
    s.push_str("    ];\n\n");
    s.push_str("    /// The API for a key, if this crate implements it.\n    pub fn from_i16(key: i16) -> Option<ApiKey> {\n        match key {\n");
    for (api, req, _) in pairs {
        let _ = writeln!(s, "            {} => Some(ApiKey::{api}),", req.api_key);
    }
    s.push_str("            _ => None,\n        }\n    }\n\n");
    s.push_str(
        "    /// The wire value.\n    pub fn code(self) -> i16 {\n        self as i16\n    }\n\n",
    );
    api_key_table(
        s,
        pairs,
        "Kafka's name for the API, e.g. `JoinGroup`.",
        "name",
        "&'static str",
        &|m| format!("{:?}", m.name.trim_end_matches("Request")),
    );
    api_key_table(
        s,
        pairs,
        "The lowest request version this crate implements.",
        "min_version",
        "i16",
        &|m| m.valid.min().unwrap_or(0).to_string(),
    );
    api_key_table(
        s,
        pairs,
        "The highest request version this crate implements.",
        "max_version",
        "i16",
        &|m| m.valid.0.map_or(-1, |v| v.1).to_string(),
    );
    api_key_table(
        s,
        pairs,
        "The first flexible request version (KIP-482), if any.",
        "flexible_min_version",
        "Option<i16>",
        &|m| match m.flexible.min() {
            Some(v) => format!("Some({v})"),
            None => "None".into(),
        },
    );
    s.push_str(
        "    /// Whether requests (and responses) of this API are flexible at `version`.\n    pub fn is_flexible(self, version: i16) -> bool {\n        self.flexible_min_version().is_some_and(|first| version >= first)\n    }\n}\n\n",
    );
}

/// A method `name` of `ApiKey` returning `ty`: a match giving each API `value` of its request.
fn api_key_table(
    s: &mut String,
    pairs: &[(&str, Message, Message)],
    doc: &str,
    name: &str,
    ty: &str,
    value: &dyn Fn(&Message) -> String,
) {
    let _ = writeln!(
        s,
        "    /// {doc}\n    pub fn {name}(self) -> {ty} {{\n        match self {{"
    );
    for (api, req, _) in pairs {
        let _ = writeln!(s, "            ApiKey::{api} => {},", value(req));
    }
    s.push_str("        }\n    }\n\n");
}

fn readme_table(pairs: &[(&str, Message, Message)]) -> String {
    let mut s = String::new();
    s.push_str(README_START);
    s.push_str("\n| API | key | versions | flexible from | module |\n|---|---:|---|---|---|\n");
    let mut sorted: Vec<_> = pairs.iter().collect();
    sorted.sort_by_key(|(_, req, _)| req.api_key);
    for (api, req, resp) in sorted {
        let flex = req
            .flexible
            .min()
            .map_or("never".to_string(), |v| format!("v{v}"));
        let mut versions = format!("v{}", req.valid.describe().replace('-', "–v"));
        if resp.valid != req.valid {
            versions.push_str(&format!(" (response v{})", resp.valid.describe()));
        }
        if req.latest_version_unstable {
            versions.push_str(" (latest marked unstable)");
        }
        let _ = writeln!(
            s,
            "| {api} | {} | {versions} | {flex} | `messages::{}` |",
            req.api_key,
            module_name(api)
        );
    }
    s.push_str(README_END);
    s
}

/// Replaces the table between the markers, or appends a `## Messages` section holding it.
fn update_readme(path: &Path, pairs: &[(&str, Message, Message)]) -> Result<(), String> {
    let table = readme_table(pairs);
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let new = match (text.find(README_START), text.find(README_END)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{table}{}", &text[..a], &text[b + README_END.len()..])
        }
        _ => format!("{text}\n## Messages\n\n{table}\n"),
    };
    write(path, &new)
}
