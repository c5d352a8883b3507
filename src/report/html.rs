//! What every page of the report shares: escaping and the page frame with its style sheet.

/// Text made safe to put in HTML, in content or in a quoted attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The style every report page uses: no fonts, images or scripts from elsewhere.
const STYLE: &str = "
body { font-family: sans-serif; margin: 0 2em 3em; color: #222; }
h1, h2, h3 { font-weight: 600; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.banner { padding: 0.8em 1.2em; margin: 1em 0; color: white; font-size: 1.4em; }
.cause { font-size: 1.15em; font-weight: 600; margin: 0.6em 0 1.2em; }
.valid { background: #2c8a2c; } .invalid { background: #c62828; } .unknown { background: #c77800; }
.tag { color: white; padding: 1px 7px; border-radius: 3px; }
.chart svg { max-width: 100%; height: auto; border: 1px solid #ddd; margin: 0.5em 0; }
.scroll { overflow-x: auto; max-width: 100%; }
.timeline td { font-size: 0.8em; min-width: 7em; max-width: 16em; }
.timeline .ok { background: #dff0d8; } .timeline .info { background: #fcebd0; }
.timeline .fail { background: #f6d3d3; } .timeline .nemesis { background: #e6e6f7; }
.timeline .focus { outline: 3px solid #c62828; }
.muted { color: #777; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; }
";

/// A whole page: `title` and the `body` HTML.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n",
        escape(title)
    )
}

/// The word of a verdict as results.json writes it (`true`, `false`, `"unknown"`).
pub fn verdict_word(valid: &serde_json::Value) -> &'static str {
    serde_json::from_value::<checkers::Validity>(valid.clone())
        .unwrap_or(checkers::Validity::Unknown)
        .word()
}

/// The CSS class of a verdict word (`VALID`, `INVALID`, `UNKNOWN`).
pub fn verdict_class(word: &str) -> &'static str {
    match word {
        "VALID" => "valid",
        "INVALID" => "invalid",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn a_page_refers_to_nothing_outside_itself() {
        let page = page("t <1>", "<p>hi</p>");
        assert!(page.contains("<title>t &lt;1&gt;</title>"));
        assert!(!page.contains("http"), "{page}");
        assert!(!page.contains("<script"), "{page}");
    }
}
