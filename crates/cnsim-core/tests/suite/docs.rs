//! The annotated example in docs/scenario-format.md is a valid scenario.

use crate::common::*;

#[test]
fn the_documented_example_is_valid_and_runs() {
    let doc = std::fs::read_to_string(repo_file("docs/scenario-format.md")).unwrap();
    let section = doc.find("## Annotated example").expect("the section");
    let start =
        section + doc[section..].find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let sc = load_str(&doc[start..end]);
    assert_eq!(sc.name, "baseline/pause");
    let r = run(&sc, None);
    assert_conservation(&r);
    assert!(r.summary.totals.volume.delivered_frames > 0);
}
