//! Property tests of the parsers a user feeds: mutations of every shipped platform
//! file, experiment file and rt-app example, and the `--set` switch parser, never panic, and
//! whatever they reject is one line naming the file. 256 cases per property (proptest's default), about a
//! second each in a debug build; `PROPTEST_CASES` raises it for a longer hunt.

use proptest::prelude::*;
use schedlab::experiment::Experiment;
use schedlab::kernel::Variant;
use schedlab::platform::parse_platform;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped files of a directory with this extension, as (path, text).
fn corpus(dir: &str, ext: &str) -> Vec<(PathBuf, String)> {
    let mut files: Vec<_> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {dir}/*.{ext}");
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// One edit a careless user or a fuzzer makes.
#[derive(Debug, Clone)]
enum Mutation {
    /// Drop line N (modulo the line count).
    DeleteLine(usize),
    /// Repeat line N.
    DuplicateLine(usize),
    /// Replace the Nth number in the text.
    Number(usize, String),
    /// Cut the text at byte N (on a character boundary).
    Truncate(usize),
    /// Insert text at byte N.
    Insert(usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let number = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("9223372036854775807".to_string()),
        Just("4294967295".to_string()),
        Just("1e30".to_string()),
        Just("nan".to_string()),
        Just("\"\"".to_string()),
        (0i64..100_000_000).prop_map(|n| n.to_string()),
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), number).prop_map(|(i, n)| Mutation::Number(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), "[\\[\\]{}=\",.\\n a-z0-9\"]{1,12}")
            .prop_map(|(i, s)| Mutation::Insert(i, s)),
    ]
}

fn boundary(text: &str, at: usize) -> usize {
    let mut i = at % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut t = text.to_string();
    for m in muts {
        let lines: Vec<&str> = t.lines().collect();
        t = match m {
            Mutation::DeleteLine(i) if !lines.is_empty() => {
                let i = i % lines.len();
                lines
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, l)| *l)
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            Mutation::DuplicateLine(i) if !lines.is_empty() => {
                let i = i % lines.len();
                let mut v = lines.clone();
                v.insert(i, lines[i]);
                v.join("\n")
            }
            Mutation::Number(i, n) => {
                let spans: Vec<(usize, usize)> = t
                    .char_indices()
                    .filter(|(j, c)| {
                        c.is_ascii_digit()
                            && (*j == 0 || !t.as_bytes()[j - 1].is_ascii_alphanumeric())
                    })
                    .map(|(j, _)| {
                        let end = t[j..]
                            .find(|c: char| !c.is_ascii_digit() && c != '.')
                            .map_or(t.len(), |e| j + e);
                        (j, end)
                    })
                    .collect();
                match spans.get(i % spans.len().max(1)) {
                    Some(&(a, b)) => format!("{}{n}{}", &t[..a], &t[b..]),
                    None => t.clone(),
                }
            }
            Mutation::Truncate(i) => t[..boundary(&t, *i)].to_string(),
            Mutation::Insert(i, s) => {
                let at = boundary(&t, *i);
                format!("{}{s}{}", &t[..at], &t[at..])
            }
            _ => t.clone(),
        };
    }
    t
}

/// A rejection is one line that names the file.
fn one_line(e: &schedlab::error::InputError, file: &str) -> Result<(), TestCaseError> {
    let line = e.to_string();
    prop_assert!(!line.contains('\n'), "two lines: {line}");
    prop_assert!(line.starts_with(file), "does not name {file}: {line}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_platform_files_are_accepted_or_rejected_in_one_line(
        pick in any::<usize>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let files = corpus("platforms", "toml");
        let (path, text) = &files[pick % files.len()];
        let name = path.file_name().unwrap().to_str().unwrap();
        let mutated = apply(text, &muts);
        match parse_platform(&mutated, name) {
            Ok(p) => {
                // What is accepted is usable: the kernel's defaults build on it.
                prop_assert!(p.nr_cpus() > 0);
                let _ = Variant::for_platform(&p);
            }
            Err(e) => one_line(&e, name)?,
        }
    }

    #[test]
    fn mutated_experiment_files_are_accepted_or_rejected_in_one_line(
        pick in any::<usize>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let files = corpus("experiments", "toml");
        let (path, text) = &files[pick % files.len()];
        let name = path.file_name().unwrap().to_str().unwrap();
        let mutated = apply(text, &muts);
        let dir = root().join("experiments");
        match Experiment::parse(&mutated, name, &dir) {
            Ok(e) => {
                prop_assert!(!e.seeds.is_empty() && e.seeds.len() <= 1000);
                prop_assert!(e.duration() <= schedlab::experiment::MAX_DURATION_NS);
                if let Err(err) = e.build() {
                    prop_assert!(!err.to_string().contains('\n'), "{err}");
                }
            }
            Err(e) => one_line(&e, name)?,
        }
    }

    #[test]
    fn mutated_rtapp_workloads_are_accepted_or_rejected_in_one_line(
        pick in any::<usize>(),
        muts in prop::collection::vec(mutation(), 1..4),
        edits in prop::collection::vec((any::<usize>(), 0u8..3, any::<u8>()), 0..8),
    ) {
        let files = corpus("tests/rtapp-doc-examples", "json");
        let (path, text) = &files[pick % files.len()];
        let name = path.file_name().unwrap().to_str().unwrap();
        // Whole lines, then single bytes of JSON's own alphabet and rt-app's keys.
        let mut bytes = apply(text, &muts).into_bytes();
        for (at, op, byte) in edits {
            let i = at % (bytes.len() + 1);
            let b = b"{}[]\",:/*-0123456789 \nrunsleptimerfoklxyz"[usize::from(byte) % 41];
            match op {
                0 if i < bytes.len() => {
                    bytes.remove(i);
                }
                1 => bytes.insert(i, b),
                _ if i < bytes.len() => bytes[i] = b,
                _ => {}
            }
        }
        let mutated = String::from_utf8_lossy(&bytes);
        if let Err(e) = schedlab::workload::parse_workload(&mutated, name) {
            one_line(&e, name)?;
        }
    }

    #[test]
    fn the_set_parser_never_panics_and_keeps_what_it_accepts_in_range(
        pick in any::<usize>(),
        typo in prop::option::of("[a-zA-Z_.]{1,3}"),
        value in prop_oneof![
            "-?[0-9]{1,20}",
            "(true|false|on|off|yes|no|max|[a-z+.-]{0,12})",
            "[0-9]{1,3}\\.[0-9]{1,3}",
            "\\PC{0,8}",
        ],
    ) {
        let all = schedlab::kernel::variant::switches();
        let info = &all[pick % all.len()];
        let mut key = info.key.replace("<path>", "/g");
        if let Some(t) = &typo {
            key.push_str(t);
        }
        let mut v = Variant::default();
        match v.set(&key, &value, "--set") {
            Ok(()) => {
                prop_assert!(typo.is_none() || schedlab::kernel::variant::switches()
                    .iter().any(|s| s.key == key), "accepted unknown `{key}`");
                // An integer switch holds a value within its range.
                if info.kind == "integer" && !key.starts_with("cpufreq.") {
                    if let Some((lo, hi)) = info.range.split_once("..=") {
                        let got = &v.to_json()[&key];
                        if let (Ok(lo), Ok(hi), Some(x)) =
                            (lo.parse::<i64>(), hi.parse::<i64>(), got.as_i64())
                        {
                            prop_assert!(lo <= x && x <= hi, "{key} = {x}");
                        }
                    }
                }
            }
            Err(e) => {
                prop_assert!(!e.to_string().contains('\n'), "{e}");
                prop_assert_eq!(e.file, "--set");
            }
        }
    }
}

#[test]
fn the_shipped_files_themselves_are_accepted() {
    for (path, text) in corpus("platforms", "toml") {
        parse_platform(&text, path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    }
    for (path, text) in corpus("experiments", "toml") {
        let e = Experiment::parse(&text, path.to_str().unwrap(), &root().join("experiments"))
            .unwrap_or_else(|e| panic!("{e}"));
        e.build().unwrap_or_else(|e| panic!("{e}"));
    }
}
