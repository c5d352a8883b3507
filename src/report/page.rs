//! report.html: one self-contained page per run folder (charts inline, no network, no
//! scripts): the verdict, the run's configuration and seed, each checker's figures, the
//! charts, and the worst findings, each linked to a timeline of the operations around it.

use super::excerpt::Excerpt;
use super::html::{escape, page, verdict_class, verdict_word};
use super::timeline::{self, Pairs};
use super::verdict;
use crate::store::RunRecord;
use checkers::counter::ReadBounds;
use checkers::{Op, Results};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// How many findings of each kind the page lists.
const FINDINGS_SHOWN: usize = 10;

/// How many timelines the page draws at most.
const TIMELINES_SHOWN: usize = 30;

/// The charts in the order the page shows them; any other chart follows.
const CHART_ORDER: [&str; 3] = ["latency", "throughput", "counter"];

/// What one report is made from.
pub struct Report<'a> {
    /// The checkers' results.
    pub results: &'a Results,
    /// run.json, when the history came from a run.
    pub run: Option<&'a RunRecord>,
    /// The history's ops around the findings, for the timelines.
    pub excerpt: &'a Excerpt,
    /// The rate the run's load invoked ops at, ops/s.
    pub achieved: Option<f64>,
    /// The folder with the charts' SVG files.
    pub plots: &'a Path,
    /// The linearizability explanation, relative to the page, when there is one.
    pub lin_page: Option<&'a str>,
}

/// The history indices the page draws a timeline around: its first findings'.
pub fn focus(report: &Report) -> Vec<u64> {
    let mut focus = Vec::new();
    top(report, &mut focus);
    focus
}

/// The whole page.
pub fn render(report: &Report) -> String {
    let mut focus = Vec::new();
    let (title, mut body) = top(report, &mut focus);
    checkers_section(&mut body, report.results);
    charts_section(&mut body, report.plots);
    run_section(&mut body, report.run, report.achieved);
    timelines_section(&mut body, &report.excerpt.ops, &focus);
    page(&title, &body)
}

/// The page's title, and its top: the verdict and its cause, then the findings, each
/// finding that gets a timeline added to `focus`.
fn top(report: &Report, focus: &mut Vec<u64>) -> (String, String) {
    let results = report.results;
    let word = results.valid.word();
    let title = format!(
        "{word} · {} · seed {}",
        results.workload.as_deref().unwrap_or("history"),
        results.seed.map_or("?".to_string(), |s| s.to_string())
    );
    let mut body = format!(
        "<div class=\"banner {}\">{}</div>\n",
        verdict_class(word),
        escape(&format!("{title} · {} ops", results.ops))
    );
    // First the verdict and its cause, then the findings, then the figures and charts.
    let (cause, worst) = verdict::sentence(results);
    let worst = worst.map(|at| format!(" (the worst read: {})", link(at, focus)));
    let _ = writeln!(
        body,
        "<p class=\"cause\">{}{}</p>",
        escape(&cause),
        worst.unwrap_or_default()
    );
    findings_section(&mut body, report, focus);
    (title, body)
}

/// An RFC 3339 time to the second, as people read it (run.json keeps the nanoseconds).
fn to_the_second(time: &Value) -> Value {
    let parsed = time.as_str().map(chrono::DateTime::parse_from_rfc3339);
    match parsed {
        Some(Ok(t)) => Value::from(t.format("%Y-%m-%d %H:%M:%S %:z").to_string()),
        _ => time.clone(),
    }
}

/// The rate the workload asked for beside the one the run achieved.
fn rates(workload: &Value, achieved: Option<f64>) -> Value {
    let configured = workload["rate"].as_f64();
    match (configured, achieved) {
        (Some(c), Some(a)) => Value::from(format!("{c:.0} configured, {a:.0} achieved")),
        (Some(c), None) => Value::from(format!("{c:.0} configured")),
        _ => Value::Null,
    }
}

/// Where the nodes ran and who played the network faults.
fn network(run: &Value) -> Value {
    let net = &run["network"];
    if net.is_object() {
        let nodes = net["nodes"].as_object().map_or(0, |n| n.len());
        return Value::from(format!(
            "netns: {nodes} network namespaces on bridge {} ({}); partitions played as nftables drop rules between them, slow links as {}",
            plain(&net["bridge"]),
            plain(&net["subnet"]),
            plain(&net["slow_links"]),
        ));
    }
    // A target's faults, if any, are its own fault plane's: `faults` says so.
    let bundled = run["nodes"]
        .as_array()
        .is_some_and(|n| n.iter().any(|n| n["pid"].as_u64() > Some(0)));
    match bundled {
        true => Value::from(
            "loopback: partitions and slow links played by the nodes themselves (each drops or delays its own messages: /admin/faults)",
        ),
        false => Value::Null,
    }
}

/// The real system a run tested, with its version; null for the bundled nodes.
fn system(run: &Value) -> Value {
    match (
        run["system"]["name"].as_str(),
        run["system"]["version"].as_str(),
    ) {
        (Some(name), Some(version)) => Value::from(format!("{name} ({version})")),
        _ => Value::Null,
    }
}

fn run_section(out: &mut String, run: Option<&RunRecord>, achieved: Option<f64>) {
    let Some(run) = run.and_then(|r| serde_json::to_value(r).ok()) else {
        return;
    };
    out.push_str("<h2>Run</h2>\n<table>\n");
    let workload = &run["workload"];
    let rows = [
        ("workload", workload["name"].clone()),
        ("seed", run["seed"].clone()),
        ("command", run["command"].clone()),
        ("started", to_the_second(&run["started"])),
        ("finished", to_the_second(&run["finished"])),
        ("interrupted", run["interrupted"].clone()),
        ("nodes", workload["nodes"].clone()),
        ("system", system(&run)),
        // The mode (Cassandra or RavenDB) is the bundled nodes' own; real systems have none.
        (
            "mode",
            bundled_only(&run, workload["cluster"]["mode"].clone()),
        ),
        ("time limit (s)", workload["time_limit"].clone()),
        ("concurrency", workload["concurrency"].clone()),
        ("rate (ops/s)", rates(workload, achieved)),
        ("network", network(&run)),
        ("faults", run["faults_note"].clone()),
        ("checker version", run["checker_version"].clone()),
    ];
    for (name, value) in rows.iter().filter(|(_, v)| !v.is_null()) {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().map(plain).collect::<Vec<_>>().join(" "),
            other => other.to_string(),
        };
        let _ = writeln!(out, "<tr><th>{name}</th><td>{}</td></tr>", escape(&text));
    }
    out.push_str("</table>\n<details><summary>The whole configuration (run.json)</summary>\n<pre>");
    let text = serde_json::to_string_pretty(workload).unwrap_or_default();
    out.push_str(&escape(&text));
    out.push_str("</pre></details>\n");
}

fn bundled_only(run: &Value, value: Value) -> Value {
    match run["system"]["name"].as_str() {
        Some(name) if name != "bundled" => Value::Null,
        _ => value,
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Each checker's verdict and its figures: every number, and every object of numbers, one
/// level down (lists and per-key maps are left to the findings and results.json).
/// A figure rounded for people: a fraction to three significant digits, a whole number as
/// it is (results.json keeps every figure exact).
fn for_people(n: &serde_json::Number) -> String {
    match (n.is_f64(), n.as_f64()) {
        (true, Some(x)) if x != 0.0 && x.fract() != 0.0 => {
            let digits = (2 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
            format!("{x:.digits$}")
        }
        _ => n.to_string(),
    }
}

fn checkers_section(out: &mut String, results: &Results) {
    out.push_str("<h2>Checkers</h2>\n");
    let absent = match results.absent_is_zero {
        true => "the target cannot tell them apart (<code>absent_is_zero</code>): every checker read <code>null</code> and <code>0</code> as the same value",
        false => "a read of an absent counter must return <code>null</code>, and <code>0</code> only for a counter that exists",
    };
    let _ = writeln!(out, "<p class=\"muted\">Absent and 0: {absent}.</p>");
    out.push_str("<table>\n<tr><th>checker</th><th>verdict</th><th>figures</th></tr>\n");
    let checkers = serde_json::to_value(&results.checkers).unwrap_or_default();
    for (name, result) in checkers.as_object().into_iter().flatten() {
        if let Some(why) = results.not_applicable.get(name) {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td><span class=\"tag\">n/a</span></td><td>{}</td></tr>",
                escape(name),
                escape(why)
            );
            continue;
        }
        let valid = verdict_word(&result["valid"]);
        let mut figures = Vec::new();
        for (field, value) in result.as_object().into_iter().flatten() {
            match value {
                Value::Number(n) => figures.push(format!("{field} {}", for_people(n))),
                Value::Object(inner)
                    if inner.values().all(Value::is_number) && !inner.is_empty() =>
                {
                    let parts: Vec<String> = (inner.iter())
                        .filter_map(|(k, v)| Some(format!("{k} {}", for_people(v.as_number()?))))
                        .collect();
                    figures.push(format!("{field}: {}", parts.join(", ")));
                }
                _ => {}
            }
        }
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><span class=\"tag {}\">{valid}</span></td><td>{}</td></tr>",
            escape(name),
            verdict_class(valid),
            escape(&figures.join(" · "))
        );
    }
    out.push_str("</table>\n");
}

/// Every chart's SVG, inline.
fn charts_section(out: &mut String, plots: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(plots)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".svg")
                .map(str::to_string)
        })
        .collect();
    let rank = |n: &String| {
        CHART_ORDER
            .iter()
            .position(|o| o == n)
            .unwrap_or(CHART_ORDER.len())
    };
    names.sort_by_key(|n| (rank(n), n.clone()));
    if names.is_empty() {
        return;
    }
    out.push_str("<h2>Charts</h2>\n");
    for name in names {
        let Ok(svg) = std::fs::read_to_string(plots.join(format!("{name}.svg"))) else {
            continue;
        };
        let svg = svg.trim_start_matches(|c| c != '<');
        let svg = svg.strip_prefix("<?xml").map_or(svg, |rest| {
            rest.split_once("?>").map_or(rest, |(_, after)| after)
        });
        let _ = writeln!(
            out,
            "<div class=\"chart\" id=\"chart-{}\">{svg}</div>",
            escape(&name)
        );
    }
}

/// A finding's history index, linked to the timeline around it, which it gets (up to
/// `TIMELINES_SHOWN`; the timelines section draws them).
fn link(at: u64, focus: &mut Vec<u64>) -> String {
    if !focus.contains(&at) && focus.len() < TIMELINES_SHOWN {
        focus.push(at);
    }
    if focus.contains(&at) {
        format!("<a href=\"#t-{at}\">{at}</a>")
    } else {
        at.to_string()
    }
}

/// An index that gets no timeline of its own: linked when a finding's timeline is its own.
fn mention(at: u64, focus: &[u64]) -> String {
    match focus.contains(&at) {
        true => format!("<a href=\"#t-{at}\">{at}</a>"),
        false => at.to_string(),
    }
}

/// The `n`-th example of a kind of finding: the first gets a timeline, the others link to
/// one only when it is theirs.
fn example(n: usize, at: u64, focus: &mut Vec<u64>) -> String {
    match n {
        0 => link(at, focus),
        _ => mention(at, focus),
    }
}

/// Examples of one kind, in order, as `example` links them, comma separated.
fn examples(indices: &[u64], focus: &mut Vec<u64>) -> String {
    let links: Vec<String> = (indices.iter().enumerate())
        .map(|(n, &at)| example(n, at, focus))
        .collect();
    links.join(", ")
}

/// The findings, each kind with its examples; the worst example of each kind gets a
/// timeline, the rest link to one only when it is theirs.
fn findings_section(out: &mut String, report: &Report, focus: &mut Vec<u64>) {
    let checkers = &report.results.checkers;
    out.push_str("<h2>Worst findings</h2>\n");
    let mut any = false;
    // The worst, and the worst of each kind they leave out (results.json keeps examples of
    // every kind).
    let all = &checkers.counter.errors;
    let mut errors: Vec<&ReadBounds> = all.iter().take(FINDINGS_SHOWN).collect();
    for read in all.iter().skip(FINDINGS_SHOWN) {
        if !errors.iter().any(|e| e.wrong_kind() == read.wrong_kind()) {
            errors.push(read);
        }
    }
    if !errors.is_empty() {
        any = true;
        out.push_str("<h3>Reads out of bounds</h3>\n<table>\n<tr><th>read</th><th>counter</th><th>returned</th><th>allowed</th><th>error</th><th>node</th><th>bound set by adds</th><th>after delete</th></tr>\n");
        let mut kinds_seen = Vec::new();
        for read in errors {
            let kind = read.wrong_kind();
            let first_of_kind = !kinds_seen.contains(&kind);
            if first_of_kind {
                kinds_seen.push(kind);
            }
            let allowed = read.allowed.to_string();
            let error = read.finding().unwrap_or_default();
            let bound: Vec<String> = read
                .bound_ops
                .iter()
                .take(6)
                .map(|i| mention(*i, focus))
                .collect();
            let index = match first_of_kind {
                true => link(read.index, focus),
                false => mention(read.index, focus),
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td></tr>",
                index,
                escape(&read.key),
                read.value.map_or("null".to_string(), |v| v.to_string()),
                escape(&allowed),
                escape(&error),
                escape(read.node.as_deref().unwrap_or("")),
                bound.join(", "),
                read.settled_through.map(|s| format!(" and all done by {s}")).unwrap_or_default(),
                read.after_delete.map(|d| mention(d, focus)).unwrap_or_default(),
            );
        }
        out.push_str("</table>\n");
    }
    let overflows = &checkers.counter.overflows;
    if !overflows.is_empty() {
        any = true;
        out.push_str("<h3>Sums past 64 bits</h3>\n<table>\n<tr><th>read</th><th>counter</th><th>returned</th><th>finding</th><th>node</th></tr>\n");
        for (i, overflow) in overflows.iter().take(FINDINGS_SHOWN).enumerate() {
            let index = example(i, overflow.index, focus);
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                index,
                escape(&overflow.key),
                overflow.value.map_or("null".to_string(), |v| v.to_string()),
                escape(&overflow.finding()),
                escape(overflow.node.as_deref().unwrap_or("")),
            );
        }
        out.push_str("</table>\n");
    }
    let events = &checkers.resurrection.list;
    if !events.is_empty() {
        any = true;
        out.push_str("<h3>Resurrections</h3>\n<table>\n<tr><th>counter</th><th>deleted at</th><th>first read</th><th>last read</th><th>reads</th><th>nodes</th><th>came back</th><th>deleted by then</th></tr>\n");
        for (i, event) in events.iter().take(FINDINGS_SHOWN).enumerate() {
            let first_read = example(i, event.first_read, focus);
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(&event.key),
                mention(event.delete, focus),
                first_read,
                event.last_read,
                event.reads,
                escape(&event.nodes.join(", ")),
                event.magnitude,
                event.deleted_count,
            );
        }
        out.push_str("</table>\n");
    }
    if let Some(convergence) = checkers
        .convergence
        .as_ref()
        .filter(|c| !c.examples.is_empty())
    {
        any = true;
        out.push_str("<h3>Final reads that did not converge</h3>\n<table>\n<tr><th>counter</th><th>per node</th><th>allowed</th></tr>\n");
        for example in &convergence.examples {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&example.key),
                escape(&example.answers()),
                escape(&example.allowed.to_string())
            );
        }
        out.push_str("</table>\n");
        let notes = report
            .run
            .map(|run| verdict::convergence_notes(run, report.results));
        for note in notes.into_iter().flatten() {
            let _ = writeln!(out, "<p>{}</p>", escape(note));
        }
    }
    let violations = &checkers.tombstones.violating_reads;
    if !violations.is_empty() {
        any = true;
        let links = examples(&violations[..violations.len().min(FINDINGS_SHOWN)], focus);
        let _ = writeln!(
            out,
            "<h3>Tombstone violations</h3>\n<p>Reads completed at {links}.</p>"
        );
    }
    let t = &checkers.tombstones;
    let scans = [
        (
            &t.failed_examples,
            t.failed_reads,
            "Reads failed for tombstones",
        ),
        (
            &t.warn_examples,
            t.warn_reads,
            "Reads over the tombstone warn threshold",
        ),
    ];
    for (indices, total, what) in scans.into_iter().filter(|(e, _, _)| !e.is_empty()) {
        any = true;
        let links = examples(indices, focus);
        let _ = writeln!(
            out,
            "<h3>{what}</h3>\n<p>{total} reads; the first completed at {links}.</p>"
        );
    }
    if let Some(lin) = checkers
        .linearizable
        .as_ref()
        .filter(|l| !l.failures.is_empty())
    {
        any = true;
        out.push_str("<h3>Not linearizable</h3>\n<table>\n<tr><th>key</th><th>why: a minimal core of ops that cannot be ordered</th><th>core ops</th><th>longest linearizable prefix</th><th>op that cannot follow</th></tr>\n");
        for failure in lin.failures.iter().take(FINDINGS_SHOWN) {
            let core: Vec<String> = failure.core.iter().map(|&i| mention(i, focus)).collect();
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{} of {}</td><td>{}</td></tr>",
                escape(failure.key.as_deref().unwrap_or("the history")),
                escape(&failure.because),
                core.join(" "),
                failure.linearized.len(),
                failure.ops,
                failure
                    .failing_op
                    .map(|i| link(i, focus))
                    .unwrap_or_default(),
            );
        }
        out.push_str("</table>\n");
        if let Some(lin_page) = report.lin_page {
            let _ = writeln!(
                out,
                "<p><a href=\"{}\">Why: the failing key's operations on a timeline</a></p>",
                escape(lin_page)
            );
        }
    }
    if !any {
        out.push_str(
            "<p class=\"muted\">Nothing out of bounds, no resurrection, no violation.</p>\n",
        );
    }
}

fn timelines_section(out: &mut String, history: &[Op], focus: &[u64]) {
    if focus.is_empty() {
        return;
    }
    let pairs: Pairs = timeline::completions(history);
    out.push_str("<h2>Timelines</h2>\n<p class=\"muted\">The operations around each finding, one column per process; the finding is outlined.</p>\n");
    let mut sorted = focus.to_vec();
    sorted.sort_unstable();
    for at in sorted {
        let _ = writeln!(out, "<h3>Around index {at}</h3>");
        out.push_str("<div class=\"scroll\">");
        out.push_str(&timeline::render(history, &pairs, at, &format!("t-{at}")));
        out.push_str("</div>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_rounded_for_people_and_whole_numbers_kept() {
        let people = |v: Value| for_people(v.as_number().expect("a number"));
        assert_eq!(people(serde_json::json!(0.03675799086757991)), "0.0368");
        assert_eq!(people(serde_json::json!(0.9924650161463939)), "0.992");
        assert_eq!(people(serde_json::json!(123.456)), "123");
        assert_eq!(people(serde_json::json!(1500)), "1500");
        assert_eq!(people(serde_json::json!(0.0)), "0.0");
        assert_eq!(people(serde_json::json!(2.0)), "2.0");
    }

    #[test]
    fn times_are_shown_to_the_second() {
        let t = Value::from("2026-12-06T02:35:05.787227441+00:00");
        assert_eq!(to_the_second(&t), "2026-12-06 02:35:05 +00:00");
        assert_eq!(to_the_second(&Value::Null), Value::Null);
    }
}
