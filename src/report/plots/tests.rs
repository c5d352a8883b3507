//! The charts: files written, sizes, colours where the data is, odd inputs.

use super::counter::{group_reads, hot_key};
use super::frame::*;
use super::latency::{latency_axis, latency_ms, MIN_LATENCY_MS};
use super::shading::{self, Mark};
use super::spans::{spans, Span};
use super::tally::Tally;
use super::throughput::{throughput, Line, Rates, Throughput};
use super::*;
use checkers::builder::HistoryBuilder;
use checkers::counter::CounterChecker;
use checkers::counter::KeyFigures;
use checkers::{Op, OpType, Process, F};
use serde_json::Value;

const MS: u64 = 1_000_000;

/// The charts every history gets, in order.
const LATENCY_AND_THROUGHPUT: [&str; 8] = [
    "latency.png",
    "latency.svg",
    "latency-quantiles.png",
    "latency-quantiles.svg",
    "throughput.png",
    "throughput.svg",
    "unknown-outcomes.png",
    "unknown-outcomes.svg",
];

/// A small history: ok, info and fail adds, two reads of the hot key (one overcounting), one of another.
fn history() -> Vec<Op> {
    let mut h = HistoryBuilder::on("views/home");
    h.add(1, 1);
    h.added(1, 1, OpType::Ok);
    h.read(2);
    h.read_ok(2, 1);
    h.add(3, 2);
    h.added(3, 2, OpType::Info);
    h.add(4, 5);
    h.added(4, 5, OpType::Fail);
    h.read(2);
    h.read_ok(2, 7);
    h.key("views/about");
    h.read(5);
    h.read_ok(5, 0);
    h.ops().to_vec()
}

/// Every ok read's bounds, as the counter checker computes them.
fn read_bounds(history: &[Op]) -> Vec<ReadBounds> {
    let mut checker = CounterChecker::keeping_reads();
    for op in history {
        checker.observe(op);
    }
    checker.finish().read_bounds
}

/// A read of `key` completing at `time` that returned `value` and allows `lower..=upper`.
fn bounds(key: &str, time: u64, value: i64, (lower, upper): (i64, i64)) -> ReadBounds {
    ReadBounds {
        key: key.to_string(),
        invoke_index: 0,
        index: 1,
        invoke_time: time,
        time,
        value: Some(value),
        lower,
        upper,
        allowed: checkers::counter::Values {
            absent: false,
            counts: checkers::counter::RangeSet::from_ranges(vec![(lower, upper)]),
        },
        ..ReadBounds::default()
    }
}

/// Each counter's figures as the charts read them: how many of `reads` are its.
fn keys_of(reads: &[ReadBounds]) -> BTreeMap<String, KeyFigures> {
    let mut keys: BTreeMap<String, KeyFigures> = BTreeMap::new();
    for read in reads {
        keys.entry(read.key.clone()).or_default().reads += 1;
    }
    keys
}

/// Draws every chart of `history` and its `reads` into `dir`, without faults, at
/// Cassandra's thresholds.
fn render_all_of(
    history: &[Op],
    reads: &[ReadBounds],
    dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let (tally, keys) = (Tally::of(history), keys_of(reads));
    let charts = Charts {
        tally: &tally,
        reads,
        keys: &keys,
        faults: &[],
        tombstones: Thresholds::default(),
        rate: None,
    };
    render_all(&charts, dir)
}

/// A span, briefly.
fn span(f: F, kind: OpType, start: u64, latency: u64) -> Span {
    Span {
        f,
        kind,
        start,
        latency,
    }
}

/// The file names of `paths`.
fn names(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| {
            p.file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Asserts that `path` is a PNG of the chart size, by its signature and IHDR chunk.
fn assert_png_of_chart_size(path: &Path) {
    let bytes = std::fs::read(path).expect("the chart file");
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes(bytes[16..20].try_into().expect("4 bytes"));
    let height = u32::from_be_bytes(bytes[20..24].try_into().expect("4 bytes"));
    assert_eq!((width, height), SIZE, "{}", path.display());
}

/// Asserts that `path` is a PNG or an SVG of the chart size.
fn assert_chart_of_chart_size(path: &Path) {
    if path.extension().is_some_and(|e| e == "svg") {
        let text = std::fs::read_to_string(path).expect("the chart file");
        let size = format!("width=\"{}\" height=\"{}\"", SIZE.0, SIZE.1);
        assert!(
            text.starts_with("<svg") && text.contains(&size),
            "{}",
            path.display()
        );
        assert!(text.contains("<text"), "{} has no text", path.display());
    } else {
        assert_png_of_chart_size(path);
    }
}

/// Draws into an in-memory RGB buffer of the chart size.
fn render(draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Drawn) -> Vec<u8> {
    register_font().expect("the embedded font");
    let mut buf = vec![0; (SIZE.0 * SIZE.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
        draw(&root).expect("drawn");
        root.present().expect("presented");
    }
    buf
}

/// How many pixels of `buf` are exactly `colour`.
fn pixels(buf: &[u8], colour: RGBColor) -> usize {
    let RGBColor(r, g, b) = colour;
    buf.chunks_exact(3).filter(|px| px == &[r, g, b]).count()
}

#[test]
fn spans_pair_each_invoke_with_its_process_completion() {
    let mut h = HistoryBuilder::on("views/home");
    h.add(1, 1);
    h.read(2);
    h.added(1, 1, OpType::Ok);
    h.add(3, 4);
    h.read_ok(2, 1);
    h.added(3, 4, OpType::Info);
    h.add(4, 2); // never completed
    h.read(5);
    h.push(5, OpType::Fail, F::Read, Value::Null);
    h.push(9, OpType::Ok, F::Read, Value::from(3)); // completes nothing
    let mut ops = h.ops().to_vec();
    for kind in [OpType::Invoke, OpType::Info] {
        let f = F::Other("kill".to_string());
        ops.push(Op::new(Process::nemesis(), kind, f, None, Value::Null));
    }
    assert_eq!(
        spans(&ops),
        vec![
            span(F::Add, OpType::Ok, 0, 2 * MS),
            span(F::Read, OpType::Ok, MS, 3 * MS),
            span(F::Add, OpType::Info, 3 * MS, 2 * MS),
            span(F::Read, OpType::Fail, 7 * MS, MS),
        ]
    );
}

#[test]
fn render_all_writes_three_charts_of_1200_by_600_as_png_and_svg() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let out = dir.path().join("plots");
    let history = history();
    let written = render_all_of(&history, &read_bounds(&history), &out).expect("rendered");
    assert_eq!(
        names(&written),
        [
            LATENCY_AND_THROUGHPUT.as_slice(),
            &["counter.png", "counter.svg", "errors.png", "errors.svg"]
        ]
        .concat()
    );
    for path in &written {
        assert!(path.starts_with(&out));
        assert_chart_of_chart_size(path);
    }
}

#[test]
fn render_all_skips_the_counter_chart_without_reads() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let written = render_all_of(&history(), &[], dir.path()).expect("rendered");
    assert_eq!(names(&written), LATENCY_AND_THROUGHPUT);
    assert!(!dir.path().join("counter.png").exists());
}

#[test]
fn empty_and_nemesis_only_histories_render_blank_charts() {
    let nemesis = Op::new(
        Process::nemesis(),
        OpType::Invoke,
        F::Other("start-partition".to_string()),
        None,
        Value::Null,
    );
    for history in [vec![], vec![nemesis]] {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let written = render_all_of(&history, &[], dir.path()).expect("rendered");
        assert_eq!(names(&written), LATENCY_AND_THROUGHPUT);
        written
            .iter()
            .for_each(|path| assert_chart_of_chart_size(path));
    }
}

#[test]
fn the_embedded_font_renders_text() {
    register_font().expect("the embedded font");
    let mut buf = vec![255; 200 * 50 * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (200, 50)).into_drawing_area();
        root.draw_text("counter 42", &(FONT, 24).into_text_style(&root), (5, 5))
            .expect("drawn");
        root.present().expect("presented");
    }
    assert!(
        buf.chunks_exact(3)
            .filter(|px| px != &[255, 255, 255])
            .count()
            > 100
    );
}

#[test]
fn text_in_an_unregistered_family_is_an_error_not_blank() {
    register_font().expect("the embedded font");
    let mut buf = vec![255; 200 * 50 * 3];
    let root = BitMapBackend::with_buffer(&mut buf, (200, 50)).into_drawing_area();
    let style = ("no-such-family", 24).into_text_style(&root);
    assert!(root.draw_text("counter", &style, (5, 5)).is_err());
}

#[test]
fn the_latency_chart_colours_markers_by_outcome() {
    let ok = vec![span(F::Add, OpType::Ok, 0, 2 * MS)];
    let mut with_fail = ok.clone();
    with_fail.push(span(F::Read, OpType::Fail, MS, 5 * MS));
    let (ok, with_fail) = (Tally::of_spans(ok), Tally::of_spans(with_fail));
    let (ok, with_fail) = (
        render(|root| latency::draw(root, &ok, &Nemesis::NONE)),
        render(|root| latency::draw(root, &with_fail, &Nemesis::NONE)),
    );
    assert!(pixels(&with_fail, FAIL_COLOUR) > pixels(&ok, FAIL_COLOUR));
    assert!(pixels(&ok, OK_COLOUR) > 0);
}

#[test]
fn the_counter_chart_marks_overcounts_red_and_undercounts_blue() {
    let fine = [bounds("k", MS, 5, (4, 6)), bounds("k", 2 * MS, 6, (5, 8))];
    let over = bounds("k", 3 * MS, 9, (5, 8));
    let under = bounds("k", 4 * MS, 2, (5, 8));
    let draw = |reads: Vec<&ReadBounds>| {
        render(|root| counter::draw(root, "k", (&reads, reads.len() as u64), &Nemesis::NONE))
    };
    let baseline = draw(fine.iter().collect());
    let marked = draw(fine.iter().chain([&over, &under]).collect());
    assert!(pixels(&marked, OVER_COLOUR) > pixels(&baseline, OVER_COLOUR));
    assert!(pixels(&marked, UNDER_COLOUR) > pixels(&baseline, UNDER_COLOUR));
}

#[test]
fn a_read_wrong_about_existence_is_marked_in_its_own_colour_and_never_thinned() {
    let fine = [bounds("k", MS, 5, (4, 6)), bounds("k", 2 * MS, 6, (5, 8))];
    let mut zero_for_absent = bounds("k", 3 * MS, 0, (0, 0));
    zero_for_absent.allowed = checkers::counter::Values::absent();
    assert!(zero_for_absent.misread().is_some() && zero_for_absent.error().is_none());
    let draw = |reads: Vec<&ReadBounds>| {
        render(|root| counter::draw(root, "k", (&reads, reads.len() as u64), &Nemesis::NONE))
    };
    let baseline = draw(fine.iter().collect());
    let marked = draw(fine.iter().chain([&zero_for_absent]).collect());
    assert!(pixels(&marked, EXISTENCE_COLOUR) > pixels(&baseline, EXISTENCE_COLOUR));
    let groups = group_reads(&[&fine[0], &zero_for_absent]);
    assert_eq!((groups.fine.len(), groups.existence.len()), (1, 1));
}

#[test]
fn thinning_never_drops_a_bad_read() {
    let mut reads: Vec<ReadBounds> = (0..3 * MAX_POINTS as u64)
        .map(|i| bounds("k", i * MS, 5, (0, 10)))
        .collect();
    reads.insert(7_777, bounds("k", 77 * MS, 15, (0, 10)));
    reads.insert(8_888, bounds("k", 88 * MS, -1, (0, 10)));
    let all: Vec<&ReadBounds> = reads.iter().collect();
    let groups = group_reads(&all);
    assert_eq!(groups.fine.len(), MAX_POINTS);
    assert!(groups.fine.iter().all(|r| r.count() == 5));
    assert_eq!(
        groups.over.iter().map(|r| r.count()).collect::<Vec<_>>(),
        [15]
    );
    assert_eq!(
        groups.under.iter().map(|r| r.count()).collect::<Vec<_>>(),
        [-1]
    );
}

#[test]
fn thin_keeps_every_kth_item_up_to_the_limit() {
    let few: Vec<usize> = (0..10).collect();
    assert_eq!(thin(&few).count(), 10);
    let many: Vec<usize> = (0..2 * MAX_POINTS + 1).collect();
    let kept: Vec<usize> = thin(&many).copied().collect();
    assert_eq!(kept.len(), (2 * MAX_POINTS + 1).div_ceil(3));
    assert_eq!(&kept[..3], [0, 3, 6]);
    assert_eq!(thin::<usize>(&[]).count(), 0);
}

#[test]
fn throughput_counts_completions_per_second_per_f_and_outcome() {
    let s = NS_PER_S;
    let spans = [
        span(F::Add, OpType::Ok, 0, MS),
        span(F::Add, OpType::Ok, s / 2, s),
        span(F::Add, OpType::Ok, s, MS),
        span(F::Read, OpType::Info, 0, 2 * s + MS),
    ];
    let line = |f, kind, points: &[(f64, f64)]| Line {
        f,
        kind,
        points: points.to_vec(),
    };
    assert_eq!(
        throughput(&Tally::of_spans(spans)),
        Throughput {
            width: 1,
            lines: vec![
                line(F::Add, OpType::Ok, &[(0.0, 1.0), (1.0, 2.0), (2.0, 0.0)]),
                line(F::Read, OpType::Info, &[(0.0, 0.0), (1.0, 0.0), (2.0, 1.0)]),
            ]
        }
    );
    assert!(throughput(&Tally::default()).lines.is_empty());
    let stepped = steps(&[(0.0, 1.0), (2.0, 3.0)], 2.0);
    assert_eq!(stepped, [(0.0, 1.0), (2.0, 1.0), (2.0, 3.0), (4.0, 3.0)]);
}

#[test]
fn long_runs_get_wider_buckets() {
    assert_eq!(bucket_seconds(0), 1);
    assert_eq!(bucket_seconds(200 * NS_PER_S), 1);
    assert_eq!(bucket_seconds(200 * NS_PER_S + 1), 2);
    assert_eq!(bucket_seconds(3_600 * NS_PER_S), 18);
    let spans = [span(F::Add, OpType::Ok, 0, 3_600 * NS_PER_S)];
    let buckets = throughput(&Tally::of_spans(spans)).lines[0].points.len();
    assert!((180..=201).contains(&buckets), "{buckets}");
}

#[test]
fn the_hot_key_is_the_most_read_one() {
    let reads = [
        bounds("b", 0, 0, (0, 0)),
        bounds("a", 0, 0, (0, 0)),
        bounds("b", 0, 0, (0, 0)),
    ];
    assert_eq!(hot_key(&keys_of(&reads)), Some("b"));
    let tie = keys_of(&reads[1..]);
    assert_eq!(hot_key(&tie), Some("a"), "ties go to the first key");
    assert_eq!(hot_key(&BTreeMap::new()), None);
}

#[test]
fn latencies_are_clamped_for_the_log_axis() {
    let zero = span(F::Add, OpType::Ok, 0, 0);
    assert_eq!(latency_ms(&zero), MIN_LATENCY_MS);
    assert_eq!(latency_ms(&span(F::Add, OpType::Ok, 0, 2 * MS)), 2.0);
    let axis = latency_axis(&Tally::of_spans([zero]));
    assert!(axis.start > 0.0 && axis.start < MIN_LATENCY_MS && axis.end > MIN_LATENCY_MS);
    assert!(latency_axis(&Tally::default()).start > 0.0);
    // Fitted: an op that took the client's whole 1 s timeout sets the top, not a power of
    // ten above it with room for the legend (which sits beside the data).
    let slowest = latency_axis(&Tally::of_spans([span(
        F::Add,
        OpType::Info,
        0,
        1_000 * MS,
    )]));
    assert!(
        slowest.end > 1_000.0 && slowest.end < 2_000.0,
        "{slowest:?}"
    );
}

#[test]
fn odd_inputs_do_not_panic() {
    let mut late = Op::new(
        Process::Client(1),
        OpType::Invoke,
        F::Add,
        None,
        Value::Null,
    );
    late.time = u64::MAX;
    let mut early = late.clone();
    early.kind = OpType::Ok;
    early.time = 0;
    let reads = [bounds("k", u64::MAX, -5, (-1_000_000, 1_000_000))];
    let dir = tempfile::tempdir().expect("a temporary folder");
    let written = render_all_of(&[late, early], &reads, dir.path()).expect("rendered");
    assert_eq!(written.len(), 12, "{written:?}");
}

#[test]
fn fault_windows_are_shaded_in_their_kind_colour() {
    // Ops from 0 to 10 s; a partition from 2 s to 4 s: the pixels of its shade (its colour
    // at 15% over white) cover a band of the chart; without it there are none.
    let spans = Tally::of_spans((0..=10).map(|s| span(F::Add, OpType::Ok, s * 1_000 * MS, MS)));
    let window = FaultWindow {
        fault: "partition".to_string(),
        value: Value::Null,
        start_time: 2_000 * MS,
        end_time: Some(4_000 * MS),
        clients: Default::default(),
    };
    let shade = |buf: &[u8]| {
        let c = shading::colour("partition");
        let tint = |v: u8| (255.0 - (255.0 - f64::from(v)) * 0.15).round() as i32;
        let (r, g, b) = (tint(c.0), tint(c.1), tint(c.2));
        buf.chunks(3)
            .filter(|p| {
                (i32::from(p[0]) - r).abs() <= 2
                    && (i32::from(p[1]) - g).abs() <= 2
                    && (i32::from(p[2]) - b).abs() <= 2
            })
            .count()
    };
    let nemesis = Nemesis {
        windows: std::slice::from_ref(&window),
        marks: &[],
    };
    let with = render(|root| latency::draw(root, &spans, &nemesis));
    let without = render(|root| latency::draw(root, &spans, &Nemesis::NONE));
    assert!(shade(&with) > 20_000, "{} shaded pixels", shade(&with));
    assert_eq!(shade(&without), 0);
}

/// Non-white pixels of a rendered chart.
fn inked(buf: &[u8]) -> usize {
    buf.chunks(3).filter(|p| p != &[255, 255, 255]).count()
}

#[test]
fn every_chart_has_ink_where_its_data_is() {
    // Each chart drawn from data and from nothing: the data adds ink (points, lines,
    // bars, shading) beyond the frame, title and legend both share.
    let mut h = HistoryBuilder::on("q/a");
    for i in 0..40 {
        h.add(1, 1);
        h.added(1, 1, if i % 7 == 0 { OpType::Info } else { OpType::Ok });
        h.read(2);
        // Spread: some under, some within, some over.
        h.read_ok(2, i + 4 * (i % 3) - 4);
        h.last_mut().expect("read").tombstones = Some(i as u64 * 50);
    }
    let mut history = h.ops().to_vec();
    for (i, op) in history.iter_mut().enumerate() {
        op.time = i as u64 * 50 * MS;
    }
    let reads = read_bounds(&history);
    assert!(reads.iter().filter(|r| r.error().is_some()).count() > 20);
    let tally = Tally::of(&history);
    let none = Tally::default();
    let window = FaultWindow {
        fault: "kill".to_string(),
        value: Value::Null,
        start_time: 500 * MS,
        end_time: Some(1_500 * MS),
        clients: Default::default(),
    };
    let marks = [Mark {
        at_s: 1.0,
        action: "flush".to_string(),
    }];
    let faults = &Nemesis {
        windows: std::slice::from_ref(&window),
        marks: &marks,
    };
    let thresholds = Thresholds {
        warn: 500,
        fail: 1_500,
        started_empty: false,
    };
    let hot: Vec<&ReadBounds> = reads.iter().collect();
    let pairs: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        (
            "latency",
            render(|r| Latency(&tally, faults).draw(r)),
            render(|r| Latency(&none, &Nemesis::NONE).draw(r)),
        ),
        (
            "quantiles",
            render(|r| Quantiles(&tally, faults).draw(r)),
            render(|r| Quantiles(&none, &Nemesis::NONE).draw(r)),
        ),
        (
            "throughput",
            render(|r| ThroughputChart(&tally, faults, Rates::default()).draw(r)),
            render(|r| ThroughputChart(&none, &Nemesis::NONE, Rates::default()).draw(r)),
        ),
        (
            "unknown",
            render(|r| Unknown(&tally, faults).draw(r)),
            render(|r| Unknown(&none, &Nemesis::NONE).draw(r)),
        ),
        (
            "counter",
            render(|r| CounterChart("q/a", (&hot, hot.len() as u64), faults).draw(r)),
            render(|r| CounterChart("q/a", (&[], 0), &Nemesis::NONE).draw(r)),
        ),
        (
            "errors",
            render(|r| Errors(&reads, reads.len() as u64).draw(r)),
            render(|r| Errors(&[], 0).draw(r)),
        ),
        (
            "tombstones",
            render(|r| Tombstones(&tally.scanned, thresholds, faults).draw(r)),
            render(|r| Tombstones(&none.scanned, thresholds, &Nemesis::NONE).draw(r)),
        ),
    ];
    let trend: Vec<trend::TrendPoint> = (0..6)
        .map(|i| trend::TrendPoint {
            workload: ["a", "b"][i as usize % 2].to_string(),
            overcount_pct: f64::from(i),
            undercount_pct: 1.0,
            resurrections: f64::from(i % 2),
            unknown_pct: 2.0,
        })
        .collect();
    // The trend's axes change with its data, so its lines are counted by colour.
    let (with, without) = (
        render(|r| Trend(&trend).draw(r)),
        render(|r| Trend(&[]).draw(r)),
    );
    assert!(
        pixels(&with, OVER_COLOUR) > pixels(&without, OVER_COLOUR) + 300,
        "trend"
    );
    assert!(pixels(&with, RESURRECTION_COLOUR) > pixels(&without, RESURRECTION_COLOUR) + 100);
    for (name, with, without) in pairs {
        assert!(
            inked(&with) > inked(&without) + 300,
            "{name}: {} vs {}",
            inked(&with),
            inked(&without)
        );
    }
}

#[test]
fn instant_nemesis_actions_are_dashed_lines_and_the_rates_level_lines() {
    let spans = Tally::of_spans((0..=10).map(|s| span(F::Add, OpType::Ok, s * 1_000 * MS, MS)));
    let marks = [Mark {
        at_s: 3.0,
        action: "repair".to_string(),
    }];
    let nemesis = Nemesis {
        windows: &[],
        marks: &marks,
    };
    let repair = shading::colour("repair");
    let with = render(|r| latency::draw(r, &spans, &nemesis));
    let without = render(|r| latency::draw(r, &spans, &Nemesis::NONE));
    assert!(pixels(&with, repair) > pixels(&without, repair) + 50);
    // The nemesis's actions come from its ops that neither start nor stop a fault.
    let mut h = HistoryBuilder::on("q/a");
    h.add(1, 1);
    let mut history = h.ops().to_vec();
    for (f, at) in [
        ("start-kill", 1),
        ("flush", 2),
        ("flush", 2),
        ("stop-kill", 3),
        ("final-reads", 4),
    ] {
        let mut op = Op::new(
            Process::nemesis(),
            OpType::Info,
            F::Other(f.to_string()),
            None,
            Value::Null,
        );
        op.time = at * 1_000 * MS;
        history.push(op);
    }
    let found = shading::marks(&history);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].action, "flush");
    // The configured and achieved rates: level lines the chart would not have otherwise.
    let rates = Rates {
        configured: Some(3.0),
        achieved: Some(1.0),
    };
    let plain = render(|r| ThroughputChart(&spans, &Nemesis::NONE, Rates::default()).draw(r));
    let levels = render(|r| ThroughputChart(&spans, &Nemesis::NONE, rates).draw(r));
    assert!(inked(&levels) > inked(&plain) + 500);
}
