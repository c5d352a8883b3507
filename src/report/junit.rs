//! junit.xml: test cases for CI systems to show; a failed case carries its message and the
//! details a person needs to reproduce it.

use super::html::escape;
use std::fmt::Write;

/// One test case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The case's class (the workload).
    pub class: String,
    /// The case's name.
    pub name: String,
    /// How long it ran, s.
    pub time_s: f64,
    /// Why it failed: a one-line message and the details; none when it passed.
    pub failure: Option<(String, String)>,
}

/// The JUnit XML of one suite named `suite`, in a set named `suites`, begun at `started`.
pub fn render(suites: &str, suite: &str, started: &str, cases: &[Case]) -> String {
    let mut body = String::new();
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    for case in cases {
        let _ = write!(
            body,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.1}\">",
            escape(&case.class),
            escape(&case.name),
            case.time_s
        );
        if let Some((message, detail)) = &case.failure {
            let _ = write!(
                body,
                "\n      <failure type=\"budget\" message=\"{}\">{}</failure>\n    ",
                escape(message),
                escape(detail)
            );
        }
        body.push_str("</testcase>\n");
    }
    let tests = cases.len();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\">\n  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" timestamp=\"{}\">\n{body}  </testsuite>\n</testsuites>\n",
        escape(suites),
        escape(suite),
        escape(started),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_case_carries_its_escaped_message_and_the_suite_counts_it() {
        let cases = [
            Case {
                class: "w".into(),
                name: "run 1: counter".into(),
                time_s: 2.0,
                failure: None,
            },
            Case {
                class: "w".into(),
                name: "run 2: counter".into(),
                time_s: 2.0,
                failure: Some(("over <budget>".into(), "replay: checker replay x".into())),
            },
        ];
        let xml = render("checker soak", "soak seed 5", "now", &cases);
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(xml.contains("message=\"over &lt;budget&gt;\""), "{xml}");
        assert_eq!(xml.matches("<testcase").count(), 2);
    }
}
