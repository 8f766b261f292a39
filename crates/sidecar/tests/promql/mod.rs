//! A small PromQL reader for the dashboard check: Grafana variable substitution and the metric
//! names an expression selects. Parsing proper is promtool's job (the test batches every
//! expression into one rule file); this only has to find the names, so it tokenizes: strings,
//! label matchers (`{...}`), ranges (`[...]`) and grouping label lists (`by (...)`, `on (...)`,
//! ...) are skipped, and an identifier that is not followed by `(` and is no keyword is a name.

#![allow(dead_code)]

/// Grafana's built-in variables, with values a query could have at run time.
const BUILTINS: &[(&str, &str)] = &[
    ("__rate_interval_ms", "60000"),
    ("__rate_interval", "1m"),
    ("__interval_ms", "15000"),
    ("__interval", "15s"),
    ("__range_ms", "3600000"),
    ("__range_s", "3600"),
    ("__range", "1h"),
    ("__from", "1700000000000"),
    ("__to", "1700003600000"),
];

/// Keywords besides [`LABEL_LISTS`] (which `metric_names` looks for first).
const KEYWORDS: &[&str] = &[
    "bool", "and", "or", "unless", "offset", "atan2", "inf", "nan", "Inf", "NaN",
];

/// Keywords followed by a parenthesized list of label names.
const LABEL_LISTS: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

/// Replaces Grafana variables (`$var`, `${var}`, `${var:fmt}`, `[[var]]`) with values a query
/// could have: built-ins by their table, the dashboard's own variables (`known`) by `.+` (they
/// only appear inside label matchers; anywhere else promtool refuses the result). An unknown
/// variable is an error.
pub fn substitute(expr: &str, known: &[String]) -> Result<String, String> {
    let mut out = String::with_capacity(expr.len());
    let mut rest = expr;
    while let Some(i) = rest.find(['$', '[']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let (name, used) = if let Some(t) = tail.strip_prefix("${") {
            let end = t
                .find('}')
                .ok_or_else(|| format!("unclosed ${{ in {expr}"))?;
            let inner = &t[..end];
            (inner.split(':').next().unwrap_or(inner), 3 + end)
        } else if let Some(t) = tail.strip_prefix("[[") {
            let end = t
                .find("]]")
                .ok_or_else(|| format!("unclosed [[ in {expr}"))?;
            (&t[..end], 4 + end)
        } else if let Some(t) = tail.strip_prefix('$') {
            let len = t
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(t.len());
            (&t[..len], 1 + len)
        } else {
            out.push('[');
            rest = &tail[1..];
            continue;
        };
        if name.is_empty() {
            // `$` inside a regex, e.g. `=~"a$"`.
            out.push('$');
            rest = &tail[1..];
            continue;
        }
        if let Some((_, v)) = BUILTINS.iter().find(|(n, _)| *n == name) {
            out.push_str(v);
        } else if known.iter().any(|k| k == name) {
            out.push_str(".+");
        } else {
            return Err(format!("unknown Grafana variable `{name}` in {expr}"));
        }
        rest = &tail[used..];
    }
    out.push_str(rest);
    Ok(out)
}

/// For a template variable's query: `label_values(expr, label)` is `expr` (none without one),
/// `query_result(expr)` is `expr`, anything else is itself.
pub fn variable_expr(query: &str) -> Option<String> {
    let q = query.trim();
    for f in ["label_values(", "query_result("] {
        if let Some(inner) = q.strip_prefix(f).and_then(|s| s.strip_suffix(')')) {
            if f == "query_result(" {
                return Some(inner.trim().to_string());
            }
            // The last top-level comma separates the label.
            let mut depth = 0i32;
            let mut in_str = None;
            let mut split = None;
            for (i, c) in inner.char_indices() {
                match (c, in_str) {
                    ('"' | '\'' | '`', None) => in_str = Some(c),
                    (c, Some(q)) if c == q => in_str = None,
                    (_, Some(_)) => {}
                    ('(' | '{' | '[', None) => depth += 1,
                    (')' | '}' | ']', None) => depth -= 1,
                    (',', None) if depth == 0 => split = Some(i),
                    _ => {}
                }
            }
            return split.map(|i| inner[..i].trim().to_string());
        }
    }
    Some(q.to_string())
}

/// The metric names an expression selects, in order of appearance, without duplicates.
pub fn metric_names(expr: &str) -> Vec<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut names: Vec<String> = Vec::new();
    let mut i = 0;
    let skip_ws = |mut j: usize| {
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        j
    };
    // Skips a bracketed block starting at `open`, honouring strings; returns the index after it.
    let skip_block = |open: usize, o: char, c: char| {
        let mut depth = 0;
        let mut j = open;
        let mut in_str: Option<char> = None;
        while j < chars.len() {
            let ch = chars[j];
            match in_str {
                Some(q) => {
                    if ch == '\\' {
                        j += 1;
                    } else if ch == q {
                        in_str = None;
                    }
                }
                None => {
                    if ch == '"' || ch == '\'' || ch == '`' {
                        in_str = Some(ch);
                    } else if ch == o {
                        depth += 1;
                    } else if ch == c {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                }
            }
            j += 1;
        }
        j
    };
    while i < chars.len() {
        let ch = chars[i];
        if ch == '"' || ch == '\'' || ch == '`' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != ch {
                if chars[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            i = j + 1;
        } else if ch == '{' {
            i = skip_block(i, '{', '}');
        } else if ch == '[' {
            i = skip_block(i, '[', ']');
        } else if ch.is_ascii_digit()
            || (ch == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            // Numbers and durations (`5m`, `1e3`, `0x1F`).
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if ch.is_ascii_alphabetic() || ch == '_' || ch == ':' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            let ident: String = chars[start..i].iter().collect();
            let next = skip_ws(i);
            if LABEL_LISTS.contains(&ident.as_str()) {
                if chars.get(next) == Some(&'(') {
                    i = skip_block(next, '(', ')');
                }
            } else if KEYWORDS.contains(&ident.as_str()) || chars.get(next) == Some(&'(') {
                // A keyword, or a function or aggregation called.
            } else if is_aggregation(&ident) && next_word_is_grouping(&chars, next) {
                // `sum by (...) (...)`.
            } else if !names.contains(&ident) {
                names.push(ident);
            }
        } else {
            i += 1;
        }
    }
    names
}

fn is_aggregation(ident: &str) -> bool {
    matches!(
        ident,
        "sum"
            | "min"
            | "max"
            | "avg"
            | "group"
            | "stddev"
            | "stdvar"
            | "count"
            | "count_values"
            | "bottomk"
            | "topk"
            | "quantile"
            | "limitk"
            | "limit_ratio"
    )
}

fn next_word_is_grouping(chars: &[char], at: usize) -> bool {
    let word: String = chars[at.min(chars.len())..]
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    word == "by" || word == "without"
}

/// The family of a sample name (`x_bucket`, `x_sum`, `x_count` of a histogram `x`).
pub fn family<'a>(name: &'a str, histograms: &[String]) -> &'a str {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix) {
            if histograms.iter().any(|h| h == base) {
                return base;
            }
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_skip_functions_labels_ranges_and_keywords() {
        let e = r#"histogram_quantile(0.99, sum by (le, pod) (rate(mooring_rebalance_duration_seconds_bucket{namespace=~"a|b", job="x"}[5m]))) / on (pod) group_left (topic) max without (cause) (mooring_rebalances_total offset 5m) > bool 3 and time() - mooring_last_rebalance_timestamp_seconds < inf"#;
        assert_eq!(
            metric_names(e),
            [
                "mooring_rebalance_duration_seconds_bucket",
                "mooring_rebalances_total",
                "mooring_last_rebalance_timestamp_seconds"
            ]
        );
        assert_eq!(metric_names("sum(up{job=\"a\"}) by (pod)"), ["up"]);
        assert_eq!(metric_names("count by (state) (x) or vector(0)"), ["x"]);
        assert_eq!(metric_names("max_over_time(y[1h:1m]) * 1e3"), ["y"]);
    }

    #[test]
    fn variables_are_substituted() {
        let known = vec!["namespace".to_string(), "pod".to_string()];
        assert_eq!(
            substitute(
                r#"rate(x{namespace=~"$namespace", pod=~"${pod:regex}"}[$__rate_interval])"#,
                &known
            )
            .unwrap(),
            r#"rate(x{namespace=~".+", pod=~".+"}[1m])"#
        );
        assert_eq!(
            substitute(r#"x{a=~"b$"}"#, &known).unwrap(),
            r#"x{a=~"b$"}"#
        );
        assert!(substitute("x{a=\"$nope\"}", &known).is_err());
        assert_eq!(
            variable_expr(
                r#"label_values(mooring_group_generation{namespace=~"$namespace"}, pod)"#
            )
            .as_deref(),
            Some(r#"mooring_group_generation{namespace=~"$namespace"}"#)
        );
        assert_eq!(variable_expr("label_values(namespace)"), None);
    }
}
