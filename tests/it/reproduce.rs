//! The bundled reproductions (`experiments/`): each runs (at the test tier's size) and goes the
//! seed's way in every row not declared different; the README's magnitude claims are the
//! files' and hold; the seed numbers in the files are the seeds' own.

use crate::common;
use schedlab::reproduce::{bundled, render, Reproduction};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn all() -> Vec<Reproduction> {
    bundled(&root().join("experiments"), None).expect("bundled reproductions load")
}

#[test]
fn every_reproduction_runs_and_matches_the_seeds_direction() {
    let all = all();
    let names: BTreeSet<&str> = all.iter().map(|r| r.seed_file.as_str()).collect();
    for seed in [
        "000_4ca246fac171556c.txt",
        "001_af70cf7c1b0b92fd.txt",
        "002_0a3bed7cc2a13025.txt",
        "003_5097063a106228c6.txt",
        "004_31cebf75612e9cd8.txt",
    ] {
        assert!(names.contains(seed), "no reproduction of {seed}");
    }
    for r in &all {
        let o = r.run(true).unwrap();
        let table = render(&o);
        assert!(o.direction_matches(), "{table}");
        if o.claims_magnitude {
            assert!(o.magnitude_matches(), "{table}");
        }
        // Every compared row has a verdict, and a declared difference says why.
        for row in &o.rows {
            let compared =
                row.seed.is_some() && row.reference != row.label && row.seed_pct.is_some();
            assert_eq!(
                row.direction_ok.is_some(),
                compared,
                "{}: {table}",
                row.label
            );
            assert!(
                row.differs.as_ref().map_or(true, |w| w.len() > 20),
                "{}",
                row.label
            );
        }
    }
}

#[test]
fn the_readme_names_the_reproductions_whose_magnitude_matches() {
    // README.md's reproduction table: `| name | seed | … | magnitude within 25% |`.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let claimed: BTreeSet<String> = readme
        .lines()
        .filter(|l| l.starts_with("| `seed"))
        .filter(|l| {
            l.trim_end()
                .trim_end_matches('|')
                .trim_end()
                .ends_with("yes")
        })
        .map(|l| l.split('`').nth(1).unwrap().to_string())
        .collect();
    let listed: BTreeSet<String> = readme
        .lines()
        .filter(|l| l.starts_with("| `seed"))
        .map(|l| l.split('`').nth(1).unwrap().to_string())
        .collect();
    let all = all();
    let files: BTreeSet<String> = all.iter().map(|r| r.experiment.name.clone()).collect();
    assert_eq!(listed, files, "the README lists every bundled reproduction");
    let claims: BTreeSet<String> = all
        .iter()
        .filter(|r| r.claims_magnitude)
        .map(|r| r.experiment.name.clone())
        .collect();
    assert_eq!(claimed, claims);
    assert!(!claims.is_empty());
}

#[test]
fn the_seed_numbers_are_copied_from_the_seeds() {
    let Some(seeds) = common::shared_dir("seeds") else {
        return;
    };
    for r in all() {
        let text = std::fs::read_to_string(seeds.join(&r.seed_file)).unwrap();
        let author = r.message.split(',').next().unwrap();
        assert!(
            text.contains(&format!("[{author}]")),
            "{author} wrote in {}",
            r.seed_file
        );
        for row in &r.rows {
            for v in &row.seed_values {
                let s = v.to_string();
                assert!(
                    text.contains(&s),
                    "{s} ({}) not in {}",
                    row.label,
                    r.seed_file
                );
            }
        }
    }
}

#[test]
fn a_bad_reproduction_table_is_an_input_error() {
    let base = "[[workload]]\ngen = \"pipe\"\n[reproduce]\nseed = \"x.txt\"\nmessage = \"m\"\n\
                metric = \"uclamp_ops\"\nseed_metric = \"s\"\n";
    let cases = [
        ("[[reproduce.row]]\nlabel = \"a\"\n", "reproduce.row", "two or more"),
        (
            "[[reproduce.row]]\nlabel = \"a\"\n[[reproduce.row]]\nlabel = \"b\"\nref = \"c\"\n",
            "reproduce.row[1].ref",
            "`c`",
        ),
        (
            "[[reproduce.row]]\nlabel = \"a\"\n[[reproduce.row]]\nlabel = \"b\"\nset = { config.HZ = 7 }\n",
            "reproduce.row[1].set.config.HZ",
            "`7`",
        ),
        (
            "[[reproduce.row]]\nlabel = \"a\"\nseed = \"many\"\n[[reproduce.row]]\nlabel = \"b\"\n",
            "reproduce.row[0].seed",
            "positive number",
        ),
        (
            "[[reproduce.row]]\nlabel = \"a\"\nworkload.fio = { latency_nice = 1 }\n\
             [[reproduce.row]]\nlabel = \"b\"\n",
            "reproduce.row[0].workload.fio",
            "`fio`",
        ),
        (
            "[[reproduce.row]]\nlabel = \"a\"\nworkload.pipe = { latency_nice = 40 }\n\
             [[reproduce.row]]\nlabel = \"b\"\n",
            "reproduce.row[0].workload.pipe (workload[0].latency_nice (line ",
            "40",
        ),
        (
            "quick = { rows = [\"c\"] }\n[[reproduce.row]]\nlabel = \"a\"\n\
             [[reproduce.row]]\nlabel = \"b\"\n",
            "reproduce.quick.rows[0]",
            "`c`",
        ),
    ];
    for (rows, place, found) in cases {
        let e = schedlab::experiment::Experiment::parse(
            &format!("{base}{rows}"),
            "r.toml",
            std::path::Path::new("."),
        )
        .unwrap();
        let err = Reproduction::from_experiment(e).expect_err(rows);
        assert_eq!(err.file, "r.toml");
        assert!(err.place.starts_with(place), "{place}: {err}");
        assert!(err.to_string().contains(found), "{err}");
    }
}
