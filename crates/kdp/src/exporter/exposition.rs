//! The exposition formats: content negotiation from the scraper's Accept
//! header, and a registry encoded as Prometheus' classic text format or as
//! OpenMetrics. What the metrics are is [`super::metrics`]' business.

use prometheus_client::encoding::text;
use prometheus_client::registry::Registry;

/// The two exposition formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Prometheus' text format 0.0.4 (the default).
    Text,
    /// OpenMetrics 1.0.0 text, when the scraper's Accept header asks for it.
    OpenMetrics,
}

impl Format {
    /// OpenMetrics only when the Accept header names it (Prometheus sends it
    /// first when it prefers it); anything else gets the classic format.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let asks = accept.is_some_and(|a| {
            a.split(',').any(|part| {
                let mut params = part.split(';');
                let media = params.next().unwrap_or("").trim();
                let q_zero = params.any(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f64>().ok())
                        .is_some_and(|q| q == 0.0)
                });
                media.eq_ignore_ascii_case("application/openmetrics-text") && !q_zero
            })
        });
        if asks {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// Encodes a registry in the format asked for.
pub fn encode(registry: &Registry, format: Format) -> Result<String, std::fmt::Error> {
    let mut om = String::new();
    text::encode(&mut om, registry)?;
    Ok(match format {
        Format::OpenMetrics => om,
        Format::Text => openmetrics_to_text(&om),
    })
}

/// prometheus-client writes OpenMetrics only. The classic format differs,
/// for what kdp registers, in three ways: a counter's HELP and TYPE name the
/// sample (`x_total`, where OpenMetrics names the family `x`), there is no
/// `# UNIT` and no `# EOF`. Samples are the same lines.
fn openmetrics_to_text(om: &str) -> String {
    let mut out = String::with_capacity(om.len());
    let mut help: Option<&str> = None;
    for line in om.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if line.starts_with("# HELP ") {
            // held until the TYPE line tells whether the name needs `_total`
            if let Some(h) = help.replace(line) {
                out.push_str(h);
                out.push('\n');
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let counter = kind == "counter";
            if let Some(h) = help.take() {
                match (
                    counter,
                    h.strip_prefix("# HELP ").and_then(|r| r.split_once(' ')),
                ) {
                    (true, Some((hname, text))) => {
                        out.push_str(&format!("# HELP {hname}_total {text}\n"));
                    }
                    _ => {
                        out.push_str(h);
                        out.push('\n');
                    }
                }
            }
            if counter {
                out.push_str(&format!("# TYPE {name}_total counter\n"));
            } else {
                out.push_str(line);
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(h) = help {
        out.push_str(h);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmetrics_only_when_asked_for() {
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(
            Format::negotiate(Some("text/plain;version=0.0.4")),
            Format::Text
        );
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        assert_eq!(
            Format::negotiate(Some(
                "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.1"
            )),
            Format::OpenMetrics
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text; q=0, text/plain")),
            Format::Text
        );
    }
}
