//! [`init`]: a global `tracing` subscriber for a service binary — fmt logging always, plus the
//! OpenTelemetry layer with an OTLP exporter when the standard environment variables configure
//! one (<https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/> and
//! <https://opentelemetry.io/docs/specs/otel/protocol/exporter/>).
//!
//! Transport: OTLP over HTTP with protobuf bodies (`http/protobuf`, port 4318), sent by
//! `reqwest`'s blocking client without TLS from the SDK's batch span processor thread. The
//! processor runs exports on its own thread outside any Tokio runtime, where an async HTTP client
//! panics for want of a reactor; the blocking client brings its own. gRPC (tonic) is not built in.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::InstrumentationScope;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::{EnvFilter, FilterExt, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use super::TARGET;

/// What [`init`] installs, read from the environment by [`OtelConfig::from_env`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OtelConfig {
    /// The full OTLP/HTTP traces URL (`.../v1/traces`); `None`: no exporter, fmt logging only.
    pub traces_endpoint: Option<String>,
    /// `service.name` of the resource; `None` leaves it to the SDK (`OTEL_SERVICE_NAME`,
    /// `OTEL_RESOURCE_ATTRIBUTES`, else `unknown_service`).
    pub service_name: Option<String>,
}

/// A configuration [`init`] refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` (or `..._TRACES_PROTOCOL`) names a transport not built in.
    #[error("{variable}={value}: only http/protobuf is supported (OTLP over HTTP, port 4318)")]
    UnsupportedProtocol {
        /// The environment variable.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// `OTEL_TRACES_EXPORTER` names an exporter other than `otlp` or `none`.
    #[error("OTEL_TRACES_EXPORTER={0}: only otlp and none are supported")]
    UnsupportedExporter(String),
    /// The endpoint is not an `http://` URL (TLS is not built in: export to a local collector).
    #[error("{variable}={value}: the OTLP endpoint must be an http:// URL (no TLS is built in)")]
    InvalidEndpoint {
        /// The environment variable.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// The OTLP exporter could not be built.
    #[error("building the OTLP exporter: {0}")]
    Exporter(String),
    /// A global subscriber is already installed.
    #[error("a global tracing subscriber is already installed: {0}")]
    AlreadyInstalled(String),
}

impl OtelConfig {
    /// From the process environment: `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER`,
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`,
    /// `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` and `OTEL_SERVICE_NAME`.
    pub fn from_env() -> Result<Self, OtelError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables through `var`.
    ///
    /// ```
    /// use mooring_consumer::otel::OtelConfig;
    ///
    /// let env = |pairs: &'static [(&'static str, &'static str)]| {
    ///     move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    /// };
    /// // Nothing set: no exporter.
    /// assert_eq!(OtelConfig::from_lookup(env(&[])).unwrap().traces_endpoint, None);
    /// // The generic endpoint gets the signal path appended.
    /// let c = OtelConfig::from_lookup(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318")])).unwrap();
    /// assert_eq!(c.traces_endpoint.as_deref(), Some("http://otel:4318/v1/traces"));
    /// ```
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self, OtelError> {
        let get = |k: &str| {
            var(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let service_name = get("OTEL_SERVICE_NAME");
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(OtelConfig {
                traces_endpoint: None,
                service_name,
            });
        }
        match get("OTEL_TRACES_EXPORTER").as_deref() {
            None | Some("otlp") => {}
            Some("none") => {
                return Ok(OtelConfig {
                    traces_endpoint: None,
                    service_name,
                })
            }
            Some(other) => return Err(OtelError::UnsupportedExporter(other.to_owned())),
        }
        for variable in [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            if let Some(value) = get(variable) {
                if value != "http/protobuf" {
                    return Err(OtelError::UnsupportedProtocol { variable, value });
                }
                // The signal-specific variable wins over the generic one.
                break;
            }
        }
        let endpoint = if let Some(url) = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            // Used as is, per the spec.
            Some(("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url.clone(), url))
        } else {
            get("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| {
                let url = format!("{}/v1/traces", base.trim_end_matches('/'));
                ("OTEL_EXPORTER_OTLP_ENDPOINT", base, url)
            })
        };
        let traces_endpoint = match endpoint {
            None => None,
            Some((variable, value, url)) => {
                if !url.starts_with("http://") {
                    return Err(OtelError::InvalidEndpoint { variable, value });
                }
                Some(url)
            }
        };
        Ok(OtelConfig {
            traces_endpoint,
            service_name,
        })
    }
}

/// Keeps the exporter alive; dropping it flushes the spans not yet sent and shuts the exporter
/// down (bounded by the exporter's timeout). Hold it until `main` returns.
#[must_use = "dropping the guard at once stops the exporter"]
#[derive(Debug)]
pub struct OtelGuard {
    provider: Option<SdkTracerProvider>,
}

impl OtelGuard {
    /// Whether spans are exported (an OTLP endpoint was configured).
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            if let Err(e) = provider.force_flush() {
                eprintln!("flushing OpenTelemetry spans: {e}");
            }
            if let Err(e) = provider.shutdown() {
                eprintln!("shutting the OpenTelemetry exporter down: {e}");
            }
        }
    }
}

/// Installs the global `tracing` subscriber from the environment ([`OtelConfig::from_env`]):
/// - fmt logging to stderr, filtered by `RUST_LOG` (default `info`); the runtime's trace spans
///   (target `mooring::trace`) are not logged;
/// - with an OTLP endpoint configured: the `tracing-opentelemetry` layer (spans and events at
///   `info` and above) exporting in batches over OTLP/HTTP, the W3C Trace Context propagator as
///   the global propagator and the tracer provider as the global one.
///
/// With no endpoint the trace spans stay disabled and cost next to nothing per record.
pub fn init() -> Result<OtelGuard, OtelError> {
    init_with(OtelConfig::from_env()?)
}

/// As [`init`], with an explicit configuration.
pub fn init_with(config: OtelConfig) -> Result<OtelGuard, OtelError> {
    let env_filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .from_env_lossy();
    // A static filter: the trace spans' call sites are never enabled for the fmt layer, so with
    // no OpenTelemetry layer the span macros return at their cached interest check.
    let not_trace_spans = Targets::new()
        .with_default(LevelFilter::TRACE)
        .with_target(TARGET, LevelFilter::OFF);
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal, never into a pod's log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(env_filter.and(not_trace_spans));
    let registry = tracing_subscriber::registry().with(fmt);
    let Some(endpoint) = config.traces_endpoint else {
        registry
            .try_init()
            .map_err(|e| OtelError::AlreadyInstalled(e.to_string()))?;
        return Ok(OtelGuard { provider: None });
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
    let mut resource = Resource::builder();
    if let Some(name) = config.service_name {
        resource = resource.with_service_name(name);
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer_with_scope(scope());
    let otel = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(LevelFilter::INFO);
    registry
        .with(otel)
        .try_init()
        .map_err(|e| OtelError::AlreadyInstalled(e.to_string()))?;
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    opentelemetry::global::set_tracer_provider(provider.clone());
    Ok(OtelGuard {
        provider: Some(provider),
    })
}

/// The instrumentation scope of the runtime's spans.
pub fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("mooring-consumer")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> Result<OtelConfig, OtelError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        OtelConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn nothing_set_means_no_exporter() {
        assert_eq!(config(&[]).expect("ok"), OtelConfig::default());
        let c = config(&[("OTEL_SERVICE_NAME", "orders")]).expect("ok");
        assert_eq!(c.traces_endpoint, None);
        assert_eq!(c.service_name.as_deref(), Some("orders"));
    }

    #[test]
    fn generic_endpoint_gets_the_traces_path() {
        for base in ["http://collector:4318", "http://collector:4318/"] {
            let c = config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", base)]).expect("ok");
            assert_eq!(
                c.traces_endpoint.as_deref(),
                Some("http://collector:4318/v1/traces")
            );
        }
    }

    #[test]
    fn traces_endpoint_is_used_as_is_and_wins() {
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:4318/custom"),
        ])
        .expect("ok");
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://b:4318/custom"));
    }

    #[test]
    fn disabled_sdk_or_none_exporter_means_no_exporter() {
        for pairs in [
            [
                ("OTEL_SDK_DISABLED", "true"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ],
            [
                ("OTEL_SDK_DISABLED", "TRUE"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ],
            [
                ("OTEL_TRACES_EXPORTER", "none"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ],
        ] {
            assert_eq!(
                config(&pairs).expect("ok").traces_endpoint,
                None,
                "{pairs:?}"
            );
        }
        // Only "true" disables (the spec: anything else is false).
        let c = config(&[
            ("OTEL_SDK_DISABLED", "1"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
        ])
        .expect("ok");
        assert!(c.traces_endpoint.is_some());
    }

    #[test]
    fn unsupported_settings_are_errors() {
        let e = config(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).expect_err("grpc");
        assert!(e.to_string().contains("http/protobuf"), "{e}");
        // The traces-specific protocol wins over the generic one.
        assert!(config(&[
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ])
        .is_ok());
        assert!(matches!(
            config(&[("OTEL_TRACES_EXPORTER", "zipkin")]),
            Err(OtelError::UnsupportedExporter(_))
        ));
        assert!(matches!(
            config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://a:4318")]),
            Err(OtelError::InvalidEndpoint { .. })
        ));
    }
}
