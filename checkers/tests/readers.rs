//! The readers of other tools' history formats: every peer history reads, detected or
//! named, and broken input of every format is an error naming its line, never a panic.

use checkers::builder::HistoryBuilder;
use checkers::history::{
    parse_history, read_history, write_edn, Format, HistoryError, ReadOptions,
};
use checkers::{Op, OpType, Process, F};
use proptest::prelude::*;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const PEERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/peer-histories");

/// Every file of the peer histories' MANIFEST.tsv with its format.
fn read_peer(relative: &str) -> Vec<Op> {
    read_history(
        &Path::new(PEERS).join(relative),
        None,
        ReadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .0
}

/// Where, if anywhere, a process completes an op it did not invoke or invokes twice.
fn pairing_error(ops: &[Op]) -> Option<String> {
    let mut pending: HashMap<&Process, bool> = HashMap::new();
    for op in ops.iter().filter(|op| op.process.is_client()) {
        let open = pending.entry(&op.process).or_default();
        match (op.kind, *open) {
            (OpType::Invoke, true) => return Some(format!("op {}: a second invoke", op.index)),
            (OpType::Invoke, false) => *open = true,
            (_, false) => return Some(format!("op {}: a completion with no invoke", op.index)),
            (_, true) => *open = false,
        }
    }
    None
}

#[test]
fn every_peer_history_reads_the_same_detected_or_named() {
    let files: Vec<(PathBuf, Format)> = crate::peer_histories::manifest()
        .into_iter()
        .map(|r| (r.path, r.format))
        .collect();
    assert!(
        files.len() >= 30,
        "the manifest lists {} files",
        files.len()
    );
    for (path, format) in files {
        let (detected, warnings) =
            read_history(&path, None, ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let (named, _) = read_history(&path, Some(format), ReadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let name = path.display();
        assert_eq!(detected, named, "{name}: detection disagrees with {format}");
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        assert!(!named.is_empty(), "{name}: no ops");
        assert!(
            named.iter().enumerate().all(|(i, op)| op.index == i as u64),
            "{name}"
        );
        assert_eq!(pairing_error(&named), None, "{name}");
    }
}

#[test]
fn knossos_ops_read_exactly() {
    let ops = read_peer("knossos/cas-register/bad/bad-analysis.edn");
    let first = (&ops[0].process, ops[0].kind, &ops[0].f, &ops[0].value);
    let write = F::Other("write".into());
    assert_eq!(
        first,
        (&Process::Client(4), OpType::Invoke, &write, &json!(2))
    );
    let second = (&ops[1].process, ops[1].kind, &ops[1].f, &ops[1].value);
    assert_eq!(second, (&Process::Client(4), OpType::Ok, &write, &json!(2)));
    assert_eq!(ops[2].value, json!(null));
    assert_eq!(ops.len(), 16);

    let ops = read_peer("knossos/cas-register/good/memstress3-0.edn");
    assert_eq!(
        (&ops[0].f, &ops[0].value),
        (&F::Other("cas".into()), &json!([2, 3]))
    );

    let ops = read_peer("knossos/cas-register/bad/immediate-failure.edn");
    assert_eq!(
        ops[2].error.as_deref(),
        Some("[:temporarily-unavailable nil]")
    );
    assert_eq!(ops[2].kind, OpType::Fail);
}

#[test]
fn a_jepsen_counter_history_keeps_its_times() {
    let ops = read_peer("jepsen/counter.edn");
    assert_eq!(ops.len(), 574);
    assert_eq!(
        (ops[0].time, &ops[0].f, &ops[0].value),
        (10_474_104_701, &F::Add, &json!(1))
    );
    assert_eq!(ops[0].key, None);
}

#[test]
fn etcd_logs_read_exactly_and_timeouts_are_indeterminate() {
    let ops = read_peer("porcupine/etcd/etcd_000.log");
    let cas = ops
        .iter()
        .find(|op| op.f == F::Other("cas".into()))
        .expect("a cas");
    assert_eq!(cas.value, json!([3, 0]));
    // Line 61: `INFO  jepsen.util - 4	:info	:write	:timed-out`.
    let timed_out = ops.iter().find(|op| op.error.is_some()).expect("a timeout");
    assert_eq!(timed_out.process, Process::Client(4));
    assert_eq!(
        (timed_out.kind, &timed_out.value),
        (OpType::Info, &json!(null))
    );
    assert_eq!(timed_out.error.as_deref(), Some("timed-out"));

    let read = "INFO  jepsen.util - 4\t:invoke\t:read\tnil\nINFO  jepsen.util - 4\t:fail\t:read\t:timed-out\n";
    let (ops, _) = parse_history(
        read.as_bytes(),
        Path::new("etcd.log"),
        None,
        ReadOptions::default(),
    )
    .expect("valid");
    assert_eq!(
        (ops[1].kind, ops[1].error.as_deref()),
        (OpType::Info, Some("timed-out"))
    );
}

#[test]
fn porcupine_kv_ops_keep_their_keys() {
    let ops = read_peer("porcupine/kv/c10-ok.txt");
    assert_eq!(ops[0].key.as_deref(), Some("0"));
    assert_eq!(
        (&ops[0].f, &ops[0].value),
        (&F::Other("append".into()), &json!("x 9 0 y"))
    );
    assert_eq!(
        (&ops[3].f, &ops[3].value),
        (&F::Other("get".into()), &json!(null))
    );
}

/// Broken input, per format: a name, the text, the line the error must name and a word it must use.
fn broken_inputs() -> Vec<(Format, &'static str, Vec<u8>, u64, &'static str)> {
    let deep =
        |open: &str, close: &str| format!("{}1{}", open.repeat(10_000), close.repeat(10_000));
    let mut cases = Vec::new();
    for format in [Format::Edn, Format::PorcupineKv] {
        let op = |rest: &str| {
            format!("{{:process 1, :type :invoke, :f :get, :key \"k\", :value {rest}}}\n")
        };
        let good = op("nil");
        let bad = |line: String| format!("{good}{line}{good}").into_bytes();
        cases.extend([
            (
                format,
                "bad type",
                bad(good.replace(":invoke", ":maybe")),
                2,
                ":maybe",
            ),
            (
                format,
                "missing f",
                bad(good.replace(":f :get, ", "")),
                2,
                "no `:f`",
            ),
            (
                format,
                "unbalanced",
                format!("{good}{}", op("[1 2")).into_bytes(),
                2,
                "started on line 2",
            ),
            (
                format,
                "bad escape",
                bad(op(r#""a\qb""#)),
                2,
                "invalid escape",
            ),
            (
                format,
                "invalid UTF-8",
                [good.as_bytes(), b"{:process 1, :f \xff}\n"].concat(),
                2,
                "UTF-8",
            ),
            (
                format,
                "deep",
                bad(op(&deep("[", "]"))),
                2,
                "nesting deeper than 64",
            ),
        ]);
    }
    let line = |rest: &str| format!("INFO  jepsen.util - 4\t:invoke\t:read\t{rest}\n");
    let good = line("nil");
    let bad = |l: String| format!("{good}{l}{good}").into_bytes();
    let log = Format::JepsenLog;
    cases.extend([
        (
            log,
            "bad type",
            bad(good.replace(":invoke", ":maybe")),
            2,
            ":maybe",
        ),
        (
            log,
            "missing f",
            bad("INFO  jepsen.util - 4\t:invoke\n".into()),
            2,
            "no `:f`",
        ),
        (
            log,
            "unbalanced",
            bad(line("[1 2")),
            2,
            "unterminated vector started on line 2",
        ),
        (
            log,
            "bad escape",
            bad(line(r#""a\qb""#)),
            2,
            "invalid escape",
        ),
        (
            log,
            "invalid UTF-8",
            [good.as_bytes(), b"INFO \xff\n"].concat(),
            2,
            "UTF-8",
        ),
        (
            log,
            "deep",
            bad(line(&deep("(", ")"))),
            2,
            "nesting deeper than 64",
        ),
    ]);
    let json = |rest: &str| {
        format!("{{\"index\":0,\"time\":1,\"process\":1,\"type\":\"invoke\",\"f\":\"read\",\"key\":\"a/b\",\"value\":{rest}}}\n")
    };
    let good = json("null");
    let second =
        |l: String| format!("{good}{}", l.replace("\"index\":0", "\"index\":1")).into_bytes();
    let jsonl = Format::Jsonl;
    cases.extend([
        (
            jsonl,
            "bad type",
            second(good.replace("\"invoke\"", "\"maybe\"")),
            2,
            "maybe",
        ),
        (
            jsonl,
            "missing f",
            second(good.replace("\"f\":\"read\",", "")),
            2,
            "`f`",
        ),
        (jsonl, "unbalanced", second(json("[1,2")), 2, ""),
        (jsonl, "bad escape", second(json(r#""a\qb""#)), 2, "escape"),
        (
            jsonl,
            "invalid UTF-8",
            [good.as_bytes(), b"{\"index\":1,\xff}\n"].concat(),
            2,
            "UTF-8",
        ),
        (jsonl, "deep", second(json(&deep("[", "]"))), 2, "recursion"),
    ]);
    cases
}

#[test]
fn broken_input_of_every_format_names_its_line() {
    for (format, name, text, line, needle) in broken_inputs() {
        for given in [Some(format), None] {
            let result = parse_history(&text, Path::new("broken"), given, ReadOptions::default());
            let Err(HistoryError::Malformed {
                line: at, message, ..
            }) = &result
            else {
                panic!("{format} {name}: expected an error naming a line, got {result:?}");
            };
            assert_eq!(*at, line, "{format} {name} ({given:?}): {message}");
            assert!(message.contains(needle), "{format} {name}: {message}");
        }
    }
}

#[test]
fn an_unterminated_knossos_history_names_the_line_it_started_on() {
    let text = "; a comment\n[{:process 4, :type :invoke, :f :write, :value 2}\n";
    let e = parse_history(
        text.as_bytes(),
        Path::new("k.edn"),
        None,
        ReadOptions::default(),
    )
    .expect_err("unterminated");
    assert!(
        e.to_string()
            .starts_with("k.edn:2: unterminated vector started on line 2"),
        "{e}"
    );
}

#[test]
fn an_edn_round_trip_gives_back_the_same_ops() {
    let mut h = HistoryBuilder::on("views/home");
    let first = h.add(3, 1);
    h.added(3, 1, OpType::Info);
    h.retry(4, 2, first);
    h.added(4, 2, OpType::Ok);
    h.read(5);
    h.read_ok(5, 3);
    let mut ops = h.ops().to_vec();
    let mut kill = Op::new(
        Process::nemesis(),
        OpType::Info,
        F::Other("kill".into()),
        None,
        json!(["n1"]),
    );
    kill.index = ops.len() as u64;
    ops.push(kill);
    let mut text = Vec::new();
    write_edn(&ops, &mut text).expect("write to memory");
    let (read, _) =
        parse_history(&text, Path::new("h.edn"), None, ReadOptions::default()).expect("reads back");
    assert_eq!(read, ops);
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(|b| json!(b)),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| json!(x)),
        any::<String>().prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

fn any_op() -> impl Strategy<Value = Op> {
    let process = prop_oneof![
        (0..=i64::MAX as u64).prop_map(Process::Client),
        any::<String>().prop_map(Process::Named),
    ];
    let kind =
        proptest::sample::select(vec![OpType::Invoke, OpType::Ok, OpType::Fail, OpType::Info]);
    let text = || proptest::option::of(any::<String>());
    let natural = || proptest::option::of(0..=i64::MAX as u64);
    (
        process,
        kind,
        any::<String>(),
        text(),
        json_value(),
        (text(), text(), text()),
        (natural(), natural(), 0..=i64::MAX as u64),
    )
        .prop_map(
            |(process, kind, f, key, value, (node, cl, error), (tombstones, retry_of, time))| {
                // An `F::Other` spelled like a known function reads back as that function.
                let mut op = Op::new(process, kind, F::from(f), key, value);
                (
                    op.node,
                    op.cl,
                    op.error,
                    op.tombstones,
                    op.retry_of,
                    op.time,
                ) = (node, cl, error, tombstones, retry_of, time);
                op
            },
        )
}

/// Samples of every format for the mutation property.
fn samples() -> Vec<(Format, Vec<u8>)> {
    let peer =
        |relative: &str| std::fs::read(Path::new(PEERS).join(relative)).expect("peer history");
    let cut = |bytes: Vec<u8>| bytes.into_iter().take(1_500).collect::<Vec<u8>>();
    vec![
        (Format::Edn, cut(peer("knossos/cas-register/bad/rethink-fail-minimal.edn"))),
        (Format::Edn, cut(peer("jepsen/counter.edn"))),
        (Format::JepsenLog, cut(peer("porcupine/etcd/etcd_000.log"))),
        (Format::PorcupineKv, cut(peer("porcupine/kv/c01-ok.txt"))),
        (Format::Jsonl, br#"{"index":0,"time":1,"process":1,"type":"invoke","f":"read","key":"a/b","value":null}
{"index":1,"time":2,"process":"nemesis","type":"info","f":"kill","value":["n1"]}
"#.to_vec()),
    ]
}

fn any_format() -> impl Strategy<Value = Option<Format>> {
    prop_oneof![
        Just(None),
        proptest::sample::select(Format::ALL.to_vec()).prop_map(Some)
    ]
}

/// Checks what every reader promises of any input: ops indexed in order with at least one
/// client op, or an error on a line of the input, or one for the history as a whole.
fn check_reads(text: &[u8], format: Option<Format>) -> Result<(), TestCaseError> {
    let lines = 1 + text.iter().filter(|&&b| b == b'\n').count() as u64;
    match parse_history(text, Path::new("p"), format, ReadOptions::default()) {
        Ok((ops, _)) => {
            prop_assert!(ops.iter().enumerate().all(|(i, op)| op.index == i as u64));
            prop_assert!(
                ops.iter().any(|op| op.process.is_client()),
                "no client op, yet read"
            );
        }
        Err(HistoryError::Malformed { line, .. }) => {
            prop_assert!((1..=lines).contains(&line), "line {line} of {lines}")
        }
        Err(HistoryError::Unusable { message, .. }) => {
            prop_assert!(message.contains("no operations"), "{message}")
        }
        Err(e) => prop_assert!(false, "not a malformed-input error: {e}"),
    }
    Ok(())
}

/// Any JSON value: scalars, and arrays and objects of them, a few levels deep.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|x| json!(x)),
        "[a-z\\\"]{0,6}".prop_map(Value::String),
        proptest::sample::select(vec![
            "invoke", "ok", "fail", "info", "add", "read", "delete"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map(
                proptest::sample::select(vec![
                    "index", "time", "process", "type", "f", "key", "value", "x"
                ]),
                inner,
                0..8
            )
            .prop_map(|m| serde_json::Value::Object(
                m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

/// Makes client ops pair: a completion with nothing open becomes an invoke, and an invoke
/// while one is open becomes its completion.
fn paired(ops: &mut [Op]) {
    let mut open = std::collections::HashSet::new();
    for op in ops.iter_mut().filter(|op| op.process.is_client()) {
        let is_open = open.contains(&op.process);
        match (op.kind == OpType::Invoke, is_open) {
            (true, true) => op.kind = OpType::Ok,
            (false, false) => op.kind = OpType::Invoke,
            _ => {}
        }
        if op.kind == OpType::Invoke {
            open.insert(op.process.clone());
        } else {
            open.remove(&op.process);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_ops_written_as_edn_read_back_the_same(mut ops in proptest::collection::vec(any_op(), 1..6)) {
        for (i, op) in ops.iter_mut().enumerate() {
            op.index = i as u64;
        }
        paired(&mut ops);
        prop_assume!(ops.iter().any(|op| op.process.is_client()));
        let mut text = Vec::new();
        write_edn(&ops, &mut text).expect("write to memory");
        let read = parse_history(&text, Path::new("h.edn"), Some(Format::Edn), ReadOptions::default());
        prop_assert_eq!(read.map(|(read, _)| read).map_err(|e| e.to_string()), Ok(ops));
    }

    #[test]
    fn arbitrary_json_lines_are_never_a_clean_history_by_accident(
        values in proptest::collection::vec(any_json(), 0..6),
    ) {
        let text: String = values.iter().map(|v| format!("{v}\n")).collect();
        check_reads(text.as_bytes(), Some(Format::Jsonl))?;
        check_reads(text.as_bytes(), None)?;
    }

    #[test]
    fn random_bytes_never_panic(text in proptest::collection::vec(any::<u8>(), 0..400), format in any_format()) {
        check_reads(&text, format)?;
    }

    #[test]
    fn random_edn_like_text_never_panics(
        text in proptest::collection::vec(proptest::sample::select(br#"[](){}#_:;"\ 1-.eNnil	ajepsen.util
"#.to_vec()), 0..300),
        format in any_format(),
    ) {
        check_reads(&text, format)?;
    }

    #[test]
    fn mutated_histories_never_panic(
        sample in 0..5usize,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0..3u8), 1..8),
    ) {
        let (own, mut text) = samples().swap_remove(sample);
        for (at, byte, edit) in edits {
            let at = at % (text.len() + 1);
            match edit {
                0 => text.insert(at, byte),
                1 if at < text.len() => text[at] = byte,
                _ if at < text.len() => { text.remove(at); }
                _ => {}
            }
        }
        check_reads(&text, Some(own))?;
        check_reads(&text, None)?;
    }
}
