//! The documentation's map is true where a test can tell: every relative link
//! (`](path)`) in README.md, ARCHITECTURE.md, REPRODUCTIONS.md and `docs/*.md` names a file
//! or folder of the repository.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files the links are read from: the root's three and every `docs/*.md`.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "REPRODUCTIONS.md"]
        .iter()
        .map(|f| root().join(f))
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The targets of a document's `](target)` links, without their `#fragment`; web and
/// mail links and bare fragments are left out.
fn relative_links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')')?];
            let target = target.split('#').next().unwrap_or_default().trim();
            let external = target.contains("://") || target.starts_with("mailto:");
            (!target.is_empty() && !external).then(|| target.to_string())
        })
        .collect()
}

#[test]
fn every_relative_link_names_a_file_that_exists() {
    let mut broken = Vec::new();
    let mut links = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap_or(Path::new("."));
        for target in relative_links(&text) {
            links += 1;
            if !dir.join(&target).exists() {
                broken.push(format!("{}: {target}", doc.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
    assert!(links > 0, "the README links the docs");
}

#[test]
fn the_link_reader_finds_relative_targets_only() {
    let text = "[a](docs/a.md#x) [b](https://e.org/) [c](#top) [d](../ARCHITECTURE.md)";
    assert_eq!(relative_links(text), ["docs/a.md", "../ARCHITECTURE.md"]);
}
