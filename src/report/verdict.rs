//! The sentence report.html opens with: the verdict and its cause, rounded for people (the
//! exact figures are in results.json), with the fault that was on when the worst read was
//! made.

use crate::api::settings::Mode;
use crate::store::RunRecord;
use checkers::convergence::Divergence;
use checkers::counter::Sum;
use checkers::counter::{ReadBounds, WrongRead};
use checkers::stats::FaultWindow;
use checkers::tombstones::TombstonesResult;
use checkers::{Results, Validity};
use std::collections::BTreeSet;

/// The verdict sentence, and the history index of the worst read it names, if any.
pub fn sentence(results: &Results) -> (String, Option<u64>) {
    let c = &results.checkers;
    let mut causes: Vec<String> = Vec::new();
    // Each kind of wrong read with its worst example: when, on which counter, under which fault.
    // A resurrection is its own finding: the overcount example is a plain one.
    let over = |r: &&ReadBounds| r.wrong_kind() == WrongRead::Overcount;
    let under = |r: &&ReadBounds| r.wrong_kind() == WrongRead::Undercount;
    let errors = &c.counter.errors;
    let counts = [
        (
            &c.counter.overcount,
            "overcounted",
            errors.iter().find(over),
        ),
        (
            &c.counter.undercount,
            "undercounted",
            errors.iter().find(under),
        ),
    ];
    let mut worst: Option<&ReadBounds> = None;
    for (m, what, example) in counts.into_iter().filter(|(m, _, _)| m.reads > 0) {
        let mut cause = format!(
            "{} {what} by up to {} ({})",
            reads(m.reads),
            m.max,
            percent(m.max_relative)
        );
        if let Some(read) = example {
            cause.push_str(&format!(" on {}{}", read.key, when(read, &c.stats.faults)));
            worst = worst.or(Some(read));
        }
        causes.push(cause);
    }
    if c.counter.overflow_reads > 0 {
        causes.push(format!(
            "{} of a sum past 64 bits",
            reads(c.counter.overflow_reads)
        ));
    }
    let misreads = c.counter.absent_as_zero + c.counter.zero_as_absent;
    if misreads > 0 {
        causes.push(format!(
            "{} mistook an absent counter for 0 or the reverse",
            reads(misreads)
        ));
    }
    if c.resurrection.events > 0 {
        causes.push(format!(
            "{} (counts back after a delete, up to {})",
            plural(c.resurrection.events, "resurrection", "resurrections"),
            c.resurrection.max_magnitude
        ));
    }
    if c.tombstones.violations > 0 {
        causes.push(format!(
            "{} broke the tombstone thresholds",
            reads(c.tombstones.violations)
        ));
    }
    if let Some(conv) = c
        .convergence
        .as_ref()
        .filter(|v| v.valid == Validity::Invalid)
    {
        if conv.disagreeing > 0 {
            causes.push(format!(
                "replicas disagree on {} after the heal",
                plural(conv.disagreeing, "counter", "counters")
            ));
        }
        if conv.out_of_bounds > 0 {
            causes.push(format!(
                "replicas agree on a final value no order allows for {}",
                plural(conv.out_of_bounds, "counter", "counters")
            ));
        }
    }
    if let Some(lin) = c.linearizable.as_ref().filter(|l| l.illegal_keys > 0) {
        causes.push(format!(
            "{} of {} not linearizable",
            lin.illegal_keys,
            plural(lin.keys as u64, "partition", "partitions")
        ));
    }
    if let Some(oracle) = c.oracle.as_ref().filter(|o| o.unflagged > 0) {
        causes.push(format!(
            "{} hold values no flagged read shows (a checker bug)",
            plural(oracle.unflagged, "counter", "counters")
        ));
    }
    let word = results.valid.word();
    let text = match results.valid {
        Validity::Valid => format!(
            "{word}: every check passed: {} within bounds{}{}",
            reads(c.counter.reads),
            faults_played(&c.stats.faults),
            tombstone_findings(&c.tombstones)
        ),
        Validity::Invalid => {
            if causes.is_empty() {
                causes.push(
                    "a checker found a violation (see the findings and the figures)".to_string(),
                );
            }
            let mut text = format!("{word}: {}", causes.join("; "));
            if c.counter.overcount.reads > 0 && c.stats.retries > 0 {
                text.push_str(&format!(
                    "; the run retried {} (a retry of an increment that timed out may apply it twice)",
                    plural(c.stats.retries, "op", "ops")
                ));
            }
            text
        }
        Validity::Unknown => format!("{word}: {}", undecided(results)),
    };
    (
        text,
        worst
            .map(|r| r.index)
            .filter(|_| results.valid == Validity::Invalid),
    )
}

/// Reads the tombstone thresholds warned about or failed, which break no rule (Cassandra
/// fails such a scan) but are what a tombstone workload exists to show.
fn tombstone_findings(t: &TombstonesResult) -> String {
    match (t.failed_reads, t.warn_reads) {
        (0, 0) => String::new(),
        (0, warned) => format!("; {} over the tombstone warn threshold", reads(warned)),
        (failed, warned) => format!(
            "; {} failed for tombstones, as Cassandra fails them, and {} went over the warn threshold",
            reads(failed),
            plural(warned, "read", "reads")
        ),
    }
}

/// Which checkers could not decide, and why where they say.
fn undecided(results: &Results) -> String {
    let c = &results.checkers;
    let mut parts = Vec::new();
    if c.counter.valid == Validity::Unknown {
        parts.push(match c.counter.unchecked_reads {
            0 => "the counter checker had nothing to judge".to_string(),
            n => format!("{} could not be judged", reads(n)),
        });
    }
    if let Some(lin) = c
        .linearizable
        .as_ref()
        .filter(|l| l.valid == Validity::Unknown)
    {
        let why = lin.reason.as_deref().unwrap_or("no answer in time");
        parts.push(format!("linearizability undecided ({why})"));
    }
    if let Some(conv) = c
        .convergence
        .as_ref()
        .filter(|v| v.valid == Validity::Unknown)
    {
        parts.push(format!(
            "no final read answered for {}",
            plural(conv.unanswered, "counter", "counters")
        ));
    }
    if parts.is_empty() {
        parts.push("a checker could not decide".to_string());
    }
    parts.join("; ")
}

/// What RavenDB's own rules say of final reads that did not converge, for a run in RavenDB
/// mode (docs/semantics.md, "RavenDB delete vs increment"): said under the table. Nodes that
/// agree above every allowed count, on a counter a delete brought back, are faithful; nodes
/// that disagree are not what RavenDB does once replication has caught up.
pub fn convergence_notes(run: &RunRecord, results: &Results) -> Vec<&'static str> {
    let c = &results.checkers;
    let Some(conv) = c.convergence.as_ref() else {
        return Vec::new();
    };
    if run.workload.cluster.mode != Mode::Ravendb || conv.valid != Validity::Invalid {
        return Vec::new();
    }
    let mut notes = Vec::new();
    let agreeing: Vec<&Divergence> = (conv.examples.iter())
        .filter(|e| e.values.values().collect::<BTreeSet<_>>().len() == 1)
        .collect();
    let brought_back = |e: &&Divergence| {
        let above = e.values.values().next().copied().flatten().map(Sum::from);
        let resurrected = c
            .counter
            .keys
            .get(&e.key)
            .is_some_and(|k| k.resurrected > 0);
        resurrected
            && above
                .zip(e.allowed.counts.max())
                .is_some_and(|(v, max)| v > max)
    };
    if conv.out_of_bounds > 0 && !agreeing.is_empty() && agreeing.iter().all(brought_back) {
        notes.push("Faithful to RavenDB, not a node defect: the nodes agree, on a count above what any order of the acknowledged ops allows, on counters a delete brought back: a delete that races an increment made on another node loses to it, and the counter comes back holding that node's whole portion, counts from before the delete included (RavenDB, \"Counters in a cluster\", concurrent Delete and Increment; docs/semantics.md, \"RavenDB delete vs increment\").");
    }
    if conv.disagreeing > 0 {
        notes.push("Not what RavenDB does once replication has caught up: every node applies the increment that wins over a delete. Nodes that still disagree at the final reads had not caught up by then (a longer heal_s shows whether they do), or a node lost a change.");
    }
    notes
}

/// `, during the partition at 12.0–18.0 s`, or `, 3.0 s after the kill at 5.0–9.0 s ended`, for the
/// fault that was on when the read returned, or the last one before it (within 10 s).
fn when(read: &ReadBounds, faults: &[FaultWindow]) -> String {
    let at = read.time;
    let during = faults
        .iter()
        .find(|f| f.start_time <= at && f.end_time.is_none_or(|end| at <= end));
    if let Some(f) = during {
        return format!(", at {}, during the {} at {}", secs(at), f.fault, span(f));
    }
    let before = faults
        .iter()
        .filter_map(|f| f.end_time.filter(|&end| end < at).map(|end| (end, f)))
        .max_by_key(|(end, _)| *end);
    match before {
        Some((end, f)) if at - end < 1_000_000_000 => {
            format!(", at {}, as the {} at {} ended", secs(at), f.fault, span(f))
        }
        Some((end, f)) if at - end <= 10_000_000_000 => format!(
            ", at {}, {} after the {} at {} ended",
            secs(at),
            secs(at - end),
            f.fault,
            span(f)
        ),
        _ => format!(", at {}, with no fault on", secs(at)),
    }
}

/// ` under 4 faults (partition, slow)`, or nothing when none was played.
fn faults_played(faults: &[FaultWindow]) -> String {
    if faults.is_empty() {
        return String::new();
    }
    let mut kinds: Vec<&str> = faults.iter().map(|f| f.fault.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    format!(
        ", under {} ({})",
        plural(faults.len() as u64, "fault", "faults"),
        kinds.join(", ")
    )
}

fn span(f: &FaultWindow) -> String {
    let start = f.start_time as f64 / 1e9;
    match f.end_time {
        Some(end) => format!("{start:.1}–{:.1} s", end as f64 / 1e9),
        None => format!("{start:.1} s (never healed)"),
    }
}

fn secs(ns: u64) -> String {
    format!("{:.1} s", ns as f64 / 1e9)
}

fn percent(share: f64) -> String {
    match share * 100.0 {
        p if p >= 10.0 => format!("{p:.0} %"),
        p => format!("{p:.1} %"),
    }
}

fn reads(n: u64) -> String {
    plural(n, "read", "reads")
}

/// `1 read`, `2 reads`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::counter::{Magnitude, RangeSet, Values};

    fn fault(kind: &str, start_s: u64, end_s: u64) -> FaultWindow {
        FaultWindow {
            fault: kind.to_string(),
            value: serde_json::Value::Null,
            start_time: start_s * 1_000_000_000,
            end_time: Some(end_s * 1_000_000_000),
            clients: Default::default(),
        }
    }

    fn invalid() -> Results {
        let mut results = Results {
            valid: Validity::Invalid,
            ..Results::default()
        };
        let c = &mut results.checkers;
        c.counter.overcount = Magnitude {
            reads: 14,
            max: 6,
            max_relative: 0.021,
            ..Magnitude::default()
        };
        c.stats.retries = 9;
        c.stats.faults = vec![fault("partition", 12, 18), fault("slow", 30, 33)];
        c.counter.errors.push(ReadBounds {
            key: "hot".to_string(),
            index: 4242,
            time: 15_500_000_000,
            value: Some(20),
            upper: 14,
            allowed: Values::count(14),
            ..ReadBounds::default()
        });
        results
    }

    #[test]
    fn an_invalid_run_says_what_how_big_where_and_under_which_fault() {
        let (text, worst) = sentence(&invalid());
        assert_eq!(
            text,
            "INVALID: 14 reads overcounted by up to 6 (2.1 %) on hot, at 15.5 s, during the partition at 12.0–18.0 s; the run retried 9 ops (a retry of an increment that timed out may apply it twice)"
        );
        assert_eq!(worst, Some(4242));
    }

    #[test]
    fn a_read_after_a_fault_names_the_fault_it_followed() {
        let mut results = invalid();
        results.checkers.counter.errors[0].time = 21_000_000_000;
        let (text, _) = sentence(&results);
        assert!(
            text.contains("at 21.0 s, 3.0 s after the partition at 12.0–18.0 s ended"),
            "{text}"
        );
    }

    #[test]
    fn a_valid_run_says_what_was_checked_and_under_which_faults() {
        let mut results = Results {
            valid: Validity::Valid,
            ..Results::default()
        };
        results.checkers.counter.reads = 323;
        results.checkers.stats.faults = vec![fault("partition", 2, 4), fault("slow", 6, 8)];
        let (text, worst) = sentence(&results);
        assert_eq!(
            text,
            "VALID: every check passed: 323 reads within bounds, under 2 faults (partition, slow)"
        );
        assert_eq!(worst, None);
        // What a tombstone workload exists to show is said even when nothing broke a rule.
        results.checkers.tombstones.failed_reads = 109;
        results.checkers.tombstones.warn_reads = 167;
        let (text, _) = sentence(&results);
        assert!(
            text.ends_with("; 109 reads failed for tombstones, as Cassandra fails them, and 167 reads went over the warn threshold"),
            "{text}"
        );
    }

    #[test]
    fn each_kind_of_wrong_read_names_its_own_worst_example() {
        let mut results = invalid();
        let c = &mut results.checkers;
        // An undercount listed first (worse) must not lend its key to the overcount.
        c.counter.errors.insert(
            0,
            ReadBounds {
                key: "cold".to_string(),
                index: 7,
                time: 40_000_000_000,
                value: Some(1),
                lower: 30,
                upper: 40,
                allowed: Values {
                    absent: false,
                    counts: RangeSet::from_ranges(vec![(30, 40)]),
                },
                ..ReadBounds::default()
            },
        );
        c.counter.undercount = Magnitude {
            reads: 1,
            max: 29,
            max_relative: 0.5,
            ..Magnitude::default()
        };
        let (text, worst) = sentence(&results);
        assert!(
            text.contains("14 reads overcounted by up to 6 (2.1 %) on hot, at 15.5 s"),
            "{text}"
        );
        assert!(
            text.contains("1 read undercounted by up to 29 (50 %) on cold, at 40.0 s"),
            "{text}"
        );
        assert_eq!(worst, Some(4242));
    }

    #[test]
    fn an_invalid_run_with_no_named_cause_still_says_where_to_look() {
        let results = Results {
            valid: Validity::Invalid,
            ..Results::default()
        };
        let (text, _) = sentence(&results);
        assert_eq!(
            text,
            "INVALID: a checker found a violation (see the findings and the figures)"
        );
    }

    #[test]
    fn ravendb_notes_excuse_only_counters_a_delete_brought_back_above_their_bounds() {
        let mut workload = crate::workload::Workload::default();
        workload.cluster.mode = Mode::Ravendb;
        let run = RunRecord::new(workload, 1);
        let example = |node_values: &[i64]| Divergence {
            key: "likes/a".to_string(),
            values: (node_values.iter().enumerate())
                .map(|(i, v)| (format!("n{}", i + 1), Some(*v)))
                .collect(),
            allowed: Values::count(4),
        };
        let mut results = Results::default();
        let with = |results: &mut Results, examples: Vec<Divergence>, disagreeing: u64| {
            results.checkers.convergence = Some(checkers::convergence::ConvergenceResult {
                valid: Validity::Invalid,
                out_of_bounds: 1,
                disagreeing,
                examples,
                ..Default::default()
            });
        };
        with(&mut results, vec![example(&[17, 17, 17])], 0);
        // Above its bounds, but no delete brought the counter back: a defect, not RavenDB.
        assert!(convergence_notes(&run, &results).is_empty());
        let figures = checkers::counter::KeyFigures {
            resurrected: 3,
            ..Default::default()
        };
        results
            .checkers
            .counter
            .keys
            .insert("likes/a".to_string(), figures);
        let notes = convergence_notes(&run, &results);
        assert!(
            notes.len() == 1 && notes[0].starts_with("Faithful to RavenDB"),
            "{notes:?}"
        );
        // Below its bounds: acknowledged adds lost, which RavenDB does not excuse.
        with(&mut results, vec![example(&[2, 2, 2])], 0);
        assert!(convergence_notes(&run, &results).is_empty());
        with(&mut results, vec![example(&[17, 8, 17])], 1);
        let notes = convergence_notes(&run, &results);
        assert!(
            notes.len() == 1 && notes[0].starts_with("Not what RavenDB does"),
            "{notes:?}"
        );
        // Cassandra mode: no note.
        let cassandra = RunRecord::new(crate::workload::Workload::default(), 1);
        assert!(convergence_notes(&cassandra, &results).is_empty());
    }
}
